//! One conversation: a first turn and at most `max_corrections` correction turns, for the whole
//! group (`llm.granularity = "task"`) or for one member. Tables, once a reply's pass, are never
//! asked for again: a reply whose tables pass and whose lines do not is asked for its lines
//! alone (`prompt::lines_request`), and when they still fail after the last turn, template
//! lines stand in for those accepted tables (`llm.message_fallback`).

use crate::client::{self, Ask, CallError, Stats};
use crate::grounding::Member;
use crate::parse::{self, Problem};
use crate::prompt::{self, TaskPrompt};
use crate::{Inner, window};
use gtb_core::task::{Message, Preference};
use gtb_generate::GenError;
use serde_json::{Value, json};

/// What one conversation asks for and how its replies are checked.
pub(crate) struct Unit<'a> {
    pub p: &'a TaskPrompt,
    /// the members whose tables it asks for: the whole group, or one member
    pub members: &'a [Member],
    /// tables accepted before it (per member: the earlier members'), in generation order
    pub accepted: &'a [(String, Preference)],
    /// the messages of the first turn and the reply's schema
    pub first: Vec<Value>,
    pub schema: String,
    pub task: &'a str,
    /// the member asked for, in per-member requests
    pub member: Option<&'a str>,
    pub seed: u64,
    pub attempt: u32,
}

impl Unit<'_> {
    /// What names the conversation's requests (seeds, labels): the task, or task/member.
    fn key(&self) -> String {
        match self.member {
            Some(m) => format!("{}/{m}", self.task),
            None => self.task.to_string(),
        }
    }
}

/// How a conversation ended.
pub(crate) enum Said {
    /// the tables of its members, accepted, and per member its line (None where template lines
    /// stand in: the lines failed after the last turn)
    Done(Vec<(String, Preference)>, Vec<Option<Message>>),
    /// the request failed for good (the transport booked it)
    Failed(GenError),
    /// every turn's reply was rejected (a model answering garbage counts against the run)
    Rejected(GenError),
}

/// A reply's tables (accepted) and its lines or their problems, and what gtb fixed in the
/// tables.
type Checked = (
    Vec<(String, Preference)>,
    Result<Vec<Message>, Vec<Problem>>,
    parse::Fixes,
);

/// What the next turn of a conversation asks for.
enum Next {
    /// the whole reply: the first turn, or a correction turn after it
    Whole(Vec<Value>),
    /// the opening lines alone, for tables that passed (`prompt::lines_request`)
    Lines {
        tables: Vec<(String, Preference)>,
        conv: Vec<Value>,
        schema: String,
    },
}

impl Inner {
    /// Run one conversation to its end; book every turn.
    pub(crate) async fn converse(&self, u: &Unit<'_>) -> Said {
        let mut next = Next::Whole(u.first.clone());
        let mut problems: Vec<Problem> = Vec::new();
        for turn in 0..=self.max_corrections {
            let last = turn == self.max_corrections;
            let label = format!("{} attempt {} turn {turn}", u.key(), u.attempt);
            let (conv, schema) = match &next {
                Next::Whole(conv) => (conv.as_slice(), u.schema.as_str()),
                Next::Lines { conv, schema, .. } => (conv.as_slice(), schema.as_str()),
            };
            let ask = Ask {
                messages: conv,
                schema,
                seed: Self::request_seed(u.seed, &u.key(), u.attempt, turn),
                max_tokens: self.max_tokens_for(conv),
                label: &label,
            };
            let checked = |c: &client::Completion| match &next {
                Next::Whole(_) => parse::parse(u.p, u.members, u.accepted, &c.content)
                    .map(|x| (x.tables, x.messages, x.fixes)),
                Next::Lines { tables, .. } => {
                    let all: Vec<(String, Preference)> =
                        u.accepted.iter().chain(tables).cloned().collect();
                    let lines = parse::parse_lines(u.p, u.members, &all, &c.content);
                    Ok((tables.clone(), lines, parse::Fixes::default()))
                }
            };
            let (c, checked) = match self.ask(&ask, &checked).await {
                Ok(x) => x,
                Err(m) => return Said::Failed(GenError(format!("LLM request failed: {m}"))),
            };
            self.usage(u.task, u.member, |x| {
                x.turns += 1;
                x.prompt_tokens += c.prompt_tokens;
                x.completion_tokens += c.completion_tokens;
                x.prompt_tokens_cached += c.prompt_tokens_cached;
            });
            let fresh = matches!(next, Next::Whole(_));
            match checked {
                Ok((tables, Ok(lines), fixes)) => {
                    if fresh {
                        self.book_fixes(&fixes);
                    }
                    return Said::Done(tables, lines.into_iter().map(Some).collect());
                }
                Ok((tables, Err(found), fixes)) => {
                    if fresh {
                        self.book_fixes(&fixes);
                    }
                    let fallback = last && self.message_fallback;
                    self.reject(u, turn, &c, &found, fallback);
                    if fallback {
                        let n = tables.len();
                        self.usage(u.task, u.member, |x| x.template_lines += n as u64);
                        return Said::Done(tables, vec![None; n]);
                    }
                    problems = found;
                    if last {
                        break;
                    }
                    let texts: Vec<String> = problems.iter().map(|p| p.text.clone()).collect();
                    let all: Vec<(String, Preference)> =
                        u.accepted.iter().chain(&tables).cloned().collect();
                    let (conv, schema) = prompt::lines_request(u.p, u.members, &all, &texts);
                    next = Next::Lines {
                        tables,
                        conv,
                        schema,
                    };
                }
                Err(mut found) => {
                    if c.finish_reason == "length" {
                        found.insert(
                            0,
                            Problem::new(
                                parse::Reason::Truncated,
                                "回复因长度上限被截断：请输出更紧凑的 JSON（不要缩进和多余空格）",
                            ),
                        );
                    }
                    self.reject(u, turn, &c, &found, false);
                    problems = found;
                    if last {
                        break;
                    }
                    next = Next::Whole(self.correction_turn(&u.first, &c, &problems));
                }
            }
            Stats::add(&self.stats.corrections, 1);
        }
        let shown: Vec<&str> = problems.iter().take(5).map(|p| p.text.as_str()).collect();
        Said::Rejected(GenError(format!(
            "LLM reply rejected after {} turn(s): {}",
            self.max_corrections + 1,
            shown.join("; ")
        )))
    }

    /// The conversation of a correction turn: the first turn, the previous reply (as compact
    /// JSON: its whitespace is no use to anyone; left out when it was no JSON at all, the
    /// problems say so), and the problems. When that would not leave the reply its room in the
    /// window, only what must be fixed is sent: the first turn and the problems.
    fn correction_turn(
        &self,
        first: &[Value],
        reply: &client::Completion,
        problems: &[Problem],
    ) -> Vec<Value> {
        let texts: Vec<String> = problems.iter().map(|p| p.text.clone()).collect();
        let fix = json!({"role": "user", "content": prompt::correction(&texts)});
        let mut conv = first.to_vec();
        if let Ok(said) = parse::extract_json(&reply.content) {
            conv.push(json!({"role": "assistant", "content": said.to_string()}));
        }
        conv.push(fix.clone());
        let fits = self
            .window()
            .is_none_or(|w| w.fits(self.reserve, window::estimate_messages(&conv)));
        if fits || conv.len() == first.len() + 1 {
            return conv;
        }
        Stats::add(&self.stats.compacted_corrections, 1);
        let mut conv = first.to_vec();
        conv.push(fix);
        conv
    }

    /// One turn's reply, checked by `check`. With `refresh_rejected`, a cached reply the checks
    /// reject is asked for again (once), and the new reply replaces it in the cache.
    async fn ask(
        &self,
        ask: &Ask<'_>,
        check: &impl Fn(&client::Completion) -> Result<Checked, Vec<Problem>>,
    ) -> Result<(client::Completion, Result<Checked, Vec<Problem>>), String> {
        let c = self
            .transport
            .chat(ask, true)
            .await
            .map_err(CallError::message)?;
        let checked = check(&c);
        let rejected = checked.as_ref().map_or(true, |x| x.1.is_err());
        if !(rejected && c.cached && self.refresh_rejected) {
            return Ok((c, checked));
        }
        let c = self
            .transport
            .chat(ask, false)
            .await
            .map_err(CallError::message)?;
        let checked = check(&c);
        Ok((c, checked))
    }

    /// Count what gtb fixed in an accepted reply's tables.
    fn book_fixes(&self, f: &parse::Fixes) {
        Stats::add(&self.stats.resolved_clashes, f.clashes as u64);
        Stats::add(&self.stats.lifted_budgets, f.budgets as u64);
    }

    /// A reply that the JSON schema it was sent with rules out (not JSON, a field missing, a
    /// name outside its enum, a number out of range; a reply cut off at its budget aside): the
    /// server did not apply the schema. Counted, and said once in the run's log.
    fn schema_ignored(&self, c: &client::Completion, problems: &[Problem]) {
        use parse::Reason::*;
        let outside = problems
            .iter()
            .any(|p| matches!(p.reason, Json | Shape | UnknownName | Vocabulary | Scalar));
        if c.finish_reason == "length"
            || !outside
            || self.transport.format() != client::Format::JsonSchema
        {
            return;
        }
        if Stats::get(&self.stats.schema_ignored) == 0 {
            eprintln!(
                "llm: warning: the server sent a reply its JSON schema rules out ({}): it does not apply response_format json_schema (constrained decoding), so names, list sizes and ranges are corrected after the fact",
                problems[0].text
            );
        }
        Stats::add(&self.stats.schema_ignored, 1);
    }

    /// Book a rejected reply: counts, reasons, and an entry of the report's list naming the
    /// turn it came in (`fallback`: template lines stand in for its lines).
    fn reject(
        &self,
        u: &Unit<'_>,
        turn: u32,
        c: &client::Completion,
        problems: &[Problem],
        fallback: bool,
    ) {
        Stats::add(&self.stats.rejected_replies, 1);
        self.usage(u.task, u.member, |x| x.rejected += 1);
        self.schema_ignored(c, problems);
        let mut reasons: Vec<&'static str> = problems.iter().map(|p| p.reason.as_str()).collect();
        reasons.sort();
        reasons.dedup();
        {
            let mut by = self.by_reason.lock().expect("by_reason");
            for r in &reasons {
                *by.entry(r).or_default() += 1;
            }
        }
        let texts: Vec<&str> = problems.iter().map(|p| p.text.as_str()).collect();
        let mut r = self.rejections.lock().expect("rejections");
        if r.len() < crate::MAX_REJECTIONS_LISTED {
            let mut entry = json!({"task_id": u.task, "attempt": u.attempt, "turn": turn, "cache_key": c.cache_key, "finish_reason": c.finish_reason, "template_messages": fallback, "reasons": reasons, "problems": texts});
            if let Some(m) = u.member {
                entry["member"] = json!(m);
            }
            r.push(entry);
        }
    }
}
