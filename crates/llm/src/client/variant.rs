//! The request body and its variants: the response format (json_schema -> json_object ->
//! text), the field of the completion budget (`max_tokens` or `max_completion_tokens`) and
//! streaming, each moved to the next for the rest of the run when the server refuses it.

use super::Transport;
use super::stats::Stats;
use std::sync::atomic::Ordering;

/// How the reply's shape is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    JsonSchema = 0,
    JsonObject = 1,
    Text = 2,
}

impl Format {
    fn from_u8(v: u8) -> Format {
        match v {
            0 => Format::JsonSchema,
            1 => Format::JsonObject,
            _ => Format::Text,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Format::JsonSchema => "json_schema",
            Format::JsonObject => "json_object",
            Format::Text => "text",
        }
    }
}

/// The body member that carries the completion budget: `max_tokens` (most servers) or
/// `max_completion_tokens` (OpenAI reasoning models reject `max_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenParam {
    MaxTokens = 0,
    MaxCompletionTokens = 1,
}

impl TokenParam {
    fn from_u8(v: u8) -> TokenParam {
        if v == 0 {
            TokenParam::MaxTokens
        } else {
            TokenParam::MaxCompletionTokens
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            TokenParam::MaxTokens => "max_tokens",
            TokenParam::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// A request variant: the response format and the token-budget field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub format: Format,
    pub tokens: TokenParam,
}

impl Transport {
    pub fn format(&self) -> Format {
        Format::from_u8(self.format.load(Ordering::Relaxed))
    }
    pub fn token_param(&self) -> TokenParam {
        TokenParam::from_u8(self.token_param.load(Ordering::Relaxed))
    }
    pub(super) fn variant(&self) -> Variant {
        Variant {
            format: self.format(),
            tokens: self.token_param(),
        }
    }

    /// The exact request body for a conversation (`messages` already serialised) in a variant.
    /// Built as text once per request: it is what is hashed, sent and stored.
    pub fn body(
        &self,
        messages: &str,
        schema: &str,
        seed: u64,
        max_tokens: u32,
        v: Variant,
    ) -> String {
        let mut b = String::with_capacity(messages.len() + schema.len() + 256);
        b.push_str("{\"model\":");
        b.push_str(&serde_json::to_string(&self.s.model).expect("string"));
        b.push_str(",\"messages\":");
        b.push_str(messages);
        b.push_str(&format!(
            ",\"temperature\":{},\"{}\":{}",
            serde_json::to_string(&self.s.temperature).expect("number"),
            v.tokens.name(),
            max_tokens
        ));
        if self.s.send_seed {
            b.push_str(&format!(",\"seed\":{seed}"));
        }
        match v.format {
            Format::JsonSchema => {
                b.push_str(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"group_preferences\",\"strict\":true,\"schema\":");
                b.push_str(schema);
                b.push_str("}}");
            }
            Format::JsonObject => b.push_str(",\"response_format\":{\"type\":\"json_object\"}"),
            Format::Text => {}
        }
        b.push_str(&self.s.extra_body);
        b.push('}');
        b
    }

    /// Variants whose cached answers count for this request: the current one and those that
    /// negotiation (weaker formats, `max_completion_tokens`) may have moved to.
    pub(super) fn lookup_variants(&self) -> Vec<Variant> {
        let first = self.variant();
        let formats: Vec<Format> = if self.s.negotiate {
            [Format::JsonSchema, Format::JsonObject, Format::Text]
                .into_iter()
                .filter(|f| (*f as u8) >= (first.format as u8))
                .collect()
        } else {
            vec![first.format]
        };
        let mut tokens = vec![first.tokens];
        if self.s.negotiate_token_param && first.tokens == TokenParam::MaxTokens {
            tokens.push(TokenParam::MaxCompletionTokens);
        }
        formats
            .iter()
            .flat_map(|&format| tokens.iter().map(move |&t| Variant { format, tokens: t }))
            .collect()
    }

    /// Whether replies are streamed now.
    pub fn streaming(&self) -> bool {
        self.streaming.load(Ordering::Relaxed)
    }

    /// A 400/422 to a streamed request that refuses streaming: plain replies from now on (with
    /// the whole-request timeout; requests refused while the first refusal was read switch too).
    /// False when the complaint is about something else.
    pub(super) fn refuse_stream(&self, text: &str) -> bool {
        let lower = text.to_lowercase();
        // the word, not "upstream"
        let said = lower.match_indices("stream").any(|(i, _)| {
            !lower[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphabetic())
        });
        if !said {
            return false;
        }
        Stats::add(&self.stats.http_other, 1);
        if self.streaming.swap(false, Ordering::Relaxed) {
            eprintln!(
                "llm: the server refused a streamed reply; asking for plain replies from now on (each must arrive within --request-timeout {} s)",
                self.s.timeout.as_secs()
            );
        }
        true
    }

    /// A 400/422 that refuses a request variant: move to the next one for the rest of the run
    /// (`max_completion_tokens` for `max_tokens`, a weaker response format). False when the
    /// complaint is about something else.
    pub(super) fn switch_variant(&self, v: Variant, text: &str) -> bool {
        let lower = text.to_lowercase();
        if self.s.negotiate_token_param
            && v.tokens == TokenParam::MaxTokens
            && lower.contains("max_completion_tokens")
        {
            Stats::add(&self.stats.http_other, 1);
            let next = TokenParam::MaxCompletionTokens;
            if self
                .token_param
                .compare_exchange(
                    v.tokens as u8,
                    next as u8,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                eprintln!(
                    "llm: the server rejected max_tokens; sending max_completion_tokens from now on (--max-tokens-param max_completion_tokens skips this)"
                );
            }
            return true;
        }
        if !(self.s.negotiate && v.format != Format::Text && mentions_format(text)) {
            return false;
        }
        Stats::add(&self.stats.http_other, 1);
        let next = if v.format == Format::JsonSchema {
            Format::JsonObject
        } else {
            Format::Text
        };
        if self
            .format
            .compare_exchange(
                v.format as u8,
                next as u8,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            Stats::add(&self.stats.format_downgrades, 1);
            eprintln!(
                "llm: the server rejected response_format {}; using {} from now on",
                v.format.name(),
                next.name()
            );
        }
        true
    }
}

/// Does an error body complain about the requested response format?
fn mentions_format(body: &str) -> bool {
    let l = body.to_lowercase();
    [
        "response_format",
        "json_schema",
        "json schema",
        "structured output",
        "guided_json",
        "grammar",
        "schema",
    ]
    .iter()
    .any(|k| l.contains(k))
}
