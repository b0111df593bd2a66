//! Travel plans in the release's format (the final JSON that `agents/multi_prompt.py` asks the
//! agent for), the lines of `plans.jsonl`, and the stand-in rule for venues the resources do
//! not name (docs/PLANS.md).
//!
//! A plan is `days` → `city_segments`; a segment is either an `intercity_transport` (the whole
//! group travels) or a city block (`city` + `activities`). Key order follows the prompt's
//! example, so that a plan serialised with `pyjson` reads like an agent's.

pub mod day;
mod read;
pub mod standin;

use serde::{Deserialize, Serialize};

pub use read::from_json;
pub use standin::{STAND_IN_MARK, STAND_IN_RULE, parse_stand_in, stand_in};

/// The value of `participants` meaning "the whole group".
pub const ALL: &str = "All";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub days: Vec<Day>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Day {
    pub day: u32,
    /// YYYY-MM-DD: the task's `time` plus (day - 1)
    pub date: String,
    pub city_segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Segment {
    Intercity(Intercity),
    City(CityBlock),
}

/// `{"type": "intercity_transport", from_city, to_city, transport_mode, start_time, end_time,
/// avg_cost}`: shared by everyone, so it has no participants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intercity {
    #[serde(rename = "type")]
    pub kind: IntercityTag,
    pub from_city: String,
    pub to_city: String,
    pub transport_mode: String,
    pub start_time: String,
    pub end_time: String,
    /// CNY per person
    pub avg_cost: u32,
}

/// The constant `"intercity_transport"` tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntercityTag {
    #[serde(rename = "intercity_transport")]
    IntercityTransport,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CityBlock {
    pub city: String,
    pub activities: Vec<Activity>,
}

/// One activity of a city block, tagged by `type` as the prompt lists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Activity {
    Attraction {
        location: String,
        start_time: String,
        end_time: String,
        participants: Vec<String>,
    },
    Food {
        location: String,
        start_time: String,
        end_time: String,
        participants: Vec<String>,
        avg_cost: u32,
    },
    /// The night's stay: the last activity of the day, everyone together (no participants);
    /// `end_time` is the next morning's check-out.
    Hotel {
        location: String,
        start_time: String,
        end_time: String,
        avg_cost: u32,
    },
    IntracityTransport {
        transport_mode: String,
        from: String,
        to: String,
        start_time: String,
        end_time: String,
        participants: Vec<String>,
    },
    /// Staying where one is while others do something else.
    Rest {
        start_time: String,
        end_time: String,
        participants: Vec<String>,
    },
}

/// One compromise a member declares: `path` is relative to the member's `preference` (as in
/// the release's compromise markers) and `value` replaces the whole field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compromise {
    pub user: String,
    pub path: String,
    pub value: serde_json::Value,
}

/// One line of a plans file (`plans.jsonl`): a task's plan with the compromises it assumes,
/// or `plan: null`, the reason and the verdict. `gtb score` reads any file of such lines (only `task_id`,
/// `plan` and `compromises` matter to it), an agent's plans converted to it included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanLine {
    pub task_id: String,
    pub plan: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// with `plan: null`: `infeasible` (the reason is a proof) or `search_exhausted` (the
    /// search ran out; the reason is the breach its best plan still had)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    #[serde(default)]
    pub compromises: Vec<Compromise>,
    #[serde(default)]
    pub scores: Option<serde_json::Value>,
    /// the stand-in locations the plan uses, with the rule (`STAND_IN_RULE`)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_ins: Option<StandIns>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandIns {
    pub rule: String,
    pub locations: Vec<String>,
}

/// `HH:MM` of minutes after midnight.
pub fn hhmm(minutes: u32) -> String {
    // `format!("{:02}:{:02}")` without the formatter: a world writes millions of these
    let (h, m) = (minutes / 60 % 24, minutes % 60);
    let digit = |x: u32| char::from(b'0' + x as u8);
    [
        digit(h / 10),
        digit(h % 10),
        ':',
        digit(m / 10),
        digit(m % 10),
    ]
    .into_iter()
    .collect()
}

/// The `participants` value of a set of members: `["All"]` when it is everyone.
pub fn participants(members: &[&str], everyone: usize) -> Vec<String> {
    if members.len() == everyone {
        vec![ALL.to_string()]
    } else {
        members.iter().map(|m| m.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_in_the_prompts_key_order() {
        let p = Plan {
            days: vec![Day {
                day: 1,
                date: "2026-05-01".into(),
                city_segments: vec![
                    Segment::Intercity(Intercity {
                        kind: IntercityTag::IntercityTransport,
                        from_city: "北京市".into(),
                        to_city: "西安市".into(),
                        transport_mode: "高铁".into(),
                        start_time: "07:00".into(),
                        end_time: "11:30".into(),
                        avg_cost: 450,
                    }),
                    Segment::City(CityBlock {
                        city: "西安市".into(),
                        activities: vec![
                            Activity::Attraction {
                                location: "西安城墙".into(),
                                start_time: "14:00".into(),
                                end_time: "16:30".into(),
                                participants: vec![ALL.into()],
                            },
                            Activity::Hotel {
                                location: "经济型（西安市·示意）".into(),
                                start_time: "20:00".into(),
                                end_time: "08:00".into(),
                                avg_cost: 110,
                            },
                        ],
                    }),
                ],
            }],
        };
        let s = gtb_core::pyjson::to_string(&p);
        assert!(s.starts_with(r#"{"days": [{"day": 1, "date": "2026-05-01", "city_segments": [{"type": "intercity_transport", "from_city": "北京市", "to_city": "西安市", "transport_mode": "高铁", "start_time": "07:00", "end_time": "11:30", "avg_cost": 450}, {"city": "西安市", "activities": [{"type": "attraction", "location": "西安城墙""#), "{s}");
        assert!(s.contains(r#"{"type": "hotel", "location": "经济型（西安市·示意）", "start_time": "20:00", "end_time": "08:00", "avg_cost": 110}"#));
        let back: Plan = serde_json::from_str(&s).unwrap();
        assert_eq!(back, p);
        assert_eq!(hhmm(8 * 60 + 5), "08:05");
        assert_eq!(participants(&["User1", "User2"], 2), vec!["All"]);
        assert_eq!(participants(&["User2"], 2), vec!["User2"]);
    }
}
