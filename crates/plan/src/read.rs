//! Reading a plan's JSON fast, with exactly the result of `serde_json::from_str::<Plan>`.
//!
//! `Segment` is untagged and `Activity` is tagged by `type`: serde reads such an enum by
//! buffering each object first (its `Content`), so a plan's activities were copied three
//! times before they became values. A world reads every witness of a split (100,000 plans at
//! training scale), and that buffering was nearly half of its reading (10,000 witnesses:
//! 51.5 µs a plan derived, 27.7 µs here). [`from_json`] reads into plain structs whose fields
//! are all optional, then picks the variant as serde would. Whenever that is not plainly the
//! same (a field of the wrong type, a missing one, an object written as an array, a duplicate
//! key), it reads the text again the derived way, so its answer (value or error) is always
//! the derived one.

use super::{Activity, CityBlock, Day, Intercity, IntercityTag, Plan, Segment};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor, value::MapAccessDeserializer};

/// `serde_json::from_str::<Plan>(text)`, without serde's buffering of the tagged objects
/// where the plan is plainly well formed (module doc).
pub fn from_json(text: &str) -> serde_json::Result<Plan> {
    if let Ok(lean) = serde_json::from_str::<LeanPlan>(text)
        && let Some(plan) = lean.plan()
    {
        return Ok(plan);
    }
    serde_json::from_str(text)
}

/// An object read from a JSON object only. A derived struct also reads an array of its fields
/// in order, and the lean structs' fields are not those of the variants: an array goes the
/// derived way.
struct MapOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MapOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData)).map(MapOnly)
    }
}

/// `Plan` and `Day` have no tagged parts of their own: the same fields, read alike.
#[derive(serde::Deserialize)]
struct LeanPlan {
    days: Vec<LeanDay>,
}

#[derive(serde::Deserialize)]
struct LeanDay {
    day: u32,
    date: String,
    city_segments: Vec<MapOnly<LeanSegment>>,
}

/// The fields of both kinds of segment.
#[derive(serde::Deserialize)]
struct LeanSegment {
    #[serde(rename = "type")]
    kind: Option<String>,
    from_city: Option<String>,
    to_city: Option<String>,
    transport_mode: Option<String>,
    start_time: Option<String>,
    end_time: Option<String>,
    avg_cost: Option<u32>,
    city: Option<String>,
    activities: Option<Vec<MapOnly<LeanActivity>>>,
}

/// The fields of every kind of activity.
#[derive(serde::Deserialize)]
struct LeanActivity {
    #[serde(rename = "type")]
    kind: Option<String>,
    location: Option<String>,
    start_time: Option<String>,
    end_time: Option<String>,
    participants: Option<Vec<String>>,
    avg_cost: Option<u32>,
    transport_mode: Option<String>,
    from: Option<String>,
    to: Option<String>,
}

impl LeanPlan {
    fn plan(self) -> Option<Plan> {
        let days = self.days.into_iter().map(|d| {
            let segments = d.city_segments.into_iter().map(|s| s.0.segment());
            Some(Day {
                day: d.day,
                date: d.date,
                city_segments: segments.collect::<Option<_>>()?,
            })
        });
        Some(Plan {
            days: days.collect::<Option<_>>()?,
        })
    }
}

impl LeanSegment {
    /// The variant serde's untagged `Segment` takes: the first that reads (`Intercity`, then
    /// `City`); None where the fields leave it to the derived reading.
    fn segment(self) -> Option<Segment> {
        let s = self;
        let complete = [
            &s.from_city,
            &s.to_city,
            &s.transport_mode,
            &s.start_time,
            &s.end_time,
        ]
        .iter()
        .all(|f| f.is_some())
            && s.avg_cost.is_some();
        if s.kind.as_deref() == Some("intercity_transport") && complete {
            // every field is there: the `?`s only unwrap
            return Some(Segment::Intercity(Intercity {
                kind: IntercityTag::IntercityTransport,
                from_city: s.from_city?,
                to_city: s.to_city?,
                transport_mode: s.transport_mode?,
                start_time: s.start_time?,
                end_time: s.end_time?,
                avg_cost: s.avg_cost?,
            }));
        }
        let activities = s.activities?.into_iter().map(|a| a.0.activity());
        Some(Segment::City(CityBlock {
            city: s.city?,
            activities: activities.collect::<Option<_>>()?,
        }))
    }
}

impl LeanActivity {
    /// The variant its `type` names, with that variant's fields (the others are ignored, as
    /// serde ignores fields it does not know); None where one is missing.
    fn activity(self) -> Option<Activity> {
        let a = self;
        let (start_time, end_time) = (a.start_time?, a.end_time?);
        Some(match a.kind?.as_str() {
            "attraction" => Activity::Attraction {
                location: a.location?,
                start_time,
                end_time,
                participants: a.participants?,
            },
            "food" => Activity::Food {
                location: a.location?,
                start_time,
                end_time,
                participants: a.participants?,
                avg_cost: a.avg_cost?,
            },
            "hotel" => Activity::Hotel {
                location: a.location?,
                start_time,
                end_time,
                avg_cost: a.avg_cost?,
            },
            "intracity_transport" => Activity::IntracityTransport {
                transport_mode: a.transport_mode?,
                from: a.from?,
                to: a.to?,
                start_time,
                end_time,
                participants: a.participants?,
            },
            "rest" => Activity::Rest {
                start_time,
                end_time,
                participants: a.participants?,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A plan with every kind of segment and activity.
    fn sample() -> Value {
        let who = json!(["User1"]);
        json!({"days": [{"day": 1, "date": "2026-05-01", "city_segments": [
            {"type": "intercity_transport", "from_city": "北京市", "to_city": "西安市",
             "transport_mode": "高铁", "start_time": "07:00", "end_time": "11:30", "avg_cost": 450},
            {"city": "西安市", "activities": [
                {"type": "intracity_transport", "transport_mode": "步行", "from": "西安站",
                 "to": "西安城墙", "start_time": "11:30", "end_time": "12:00", "participants": ["All"]},
                {"type": "attraction", "location": "西安城墙", "start_time": "12:00",
                 "end_time": "14:00", "participants": who},
                {"type": "rest", "start_time": "12:00", "end_time": "14:00", "participants": ["User2"]},
                {"type": "food", "location": "回民街", "start_time": "14:00", "end_time": "15:00",
                 "participants": ["All"], "avg_cost": 60},
                {"type": "hotel", "location": "西安宾馆", "start_time": "20:00", "end_time": "08:00",
                 "avg_cost": 300}]}]}]})
    }

    /// Both readings of `text` agree: the same plan, or the same error.
    fn agree(text: &str) {
        let derived = serde_json::from_str::<Plan>(text).map_err(|e| e.to_string());
        let fast = from_json(text).map_err(|e| e.to_string());
        assert_eq!(fast, derived, "{text}");
    }

    /// Every object of `v`, by its path of keys and indices.
    fn objects(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
        match v {
            Value::Object(m) => {
                out.push(at.clone());
                for (k, x) in m {
                    at.push(k.as_str().into());
                    objects(x, at, out);
                    at.pop();
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    at.push(i.into());
                    objects(x, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }

    fn node<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
        path.iter().fold(v, |v, k| match k {
            Value::String(k) => &mut v[k.as_str()],
            k => &mut v[k.as_u64().unwrap() as usize],
        })
    }

    #[test]
    fn reads_a_plan_as_serde_does() {
        let plan = sample();
        agree(&plan.to_string());
        assert!(from_json(&plan.to_string()).is_ok());
        let mut paths = Vec::new();
        objects(&plan, &mut Vec::new(), &mut paths);
        let odd = [
            Value::Null,
            json!(5),
            json!(-1),
            json!(2.5),
            json!("intercity_transport"),
            json!("x"),
            json!([]),
            json!(["All"]),
            json!({}),
        ];
        let mut cases = 0;
        for path in &paths {
            let keys: Vec<String> = node(&mut plan.clone(), path)
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            for k in &keys {
                // a field dropped, or of another type
                let mut v = plan.clone();
                node(&mut v, path).as_object_mut().unwrap().remove(k);
                agree(&v.to_string());
                for x in &odd {
                    let mut v = plan.clone();
                    node(&mut v, path)[k.as_str()] = x.clone();
                    agree(&v.to_string());
                    cases += 1;
                }
            }
            // fields another kind has, an unknown one, and the object as an array
            for (k, x) in [
                ("city", json!("西安市")),
                ("activities", json!([])),
                ("zz", json!(1)),
            ]
            .into_iter()
            .chain([
                ("type", json!("intercity_transport")),
                ("avg_cost", json!(9)),
            ]) {
                let mut v = plan.clone();
                node(&mut v, path)[k] = x;
                agree(&v.to_string());
            }
            let mut v = plan.clone();
            let n = node(&mut v, path);
            *n = Value::Array(n.as_object().unwrap().values().cloned().collect());
            agree(&v.to_string());
            cases += 1;
        }
        assert!(cases > 300, "{cases}");
        // a key twice, and an intercity segment with a city block's fields as well
        let text = plan.to_string();
        agree(&text.replacen("\"avg_cost\": 60", "\"avg_cost\": 60, \"avg_cost\": 60", 1));
        agree(&text.replacen("\"avg_cost\":60", "\"avg_cost\":60,\"avg_cost\":60", 1));
        agree(&text.replacen(
            "\"avg_cost\":450",
            "\"avg_cost\":450,\"city\":\"x\",\"activities\":[]",
            1,
        ));
        agree("[]");
        agree("{}");
        agree("not json");
    }
}
