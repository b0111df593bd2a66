//! `travel_search_trains` and `travel_search_flights`: a MODELLED timetable over the transport
//! table. Journey minutes and fares are the table's (`raw_data/transport.csv`, the figures the
//! witness plans and the validators use); departure times and train or flight numbers are
//! modelled (a fixed daily pattern per pair plus every departure a witness plan takes on that
//! date), and the answers say so.

use crate::names::{decimal, minutes, small_hash_of};
use crate::poi::{Answer, fit_texts};
use crate::{World, no_data, param};
use gtb_resources::{CityId, TransportOption};
use serde_json::{Map, Value, json};

/// The modelled daily departures per mode before the pair's offset (minutes after midnight).
fn pattern(mode: &str) -> &'static [u32] {
    match mode {
        "高铁" => &[450, 630, 840, 1050],
        "火车" => &[495, 1290],
        _ => &[490, 840, 1080],
    }
}

/// The label of a timetable answer: numbers and departure times are modelled (docs/HARNESS.md);
/// `minutes` and `price` (CNY per person) are the transport table's.
const TIMETABLE_NOTE: &str = "modelled";

/// One modelled service.
struct Service<'o> {
    option: &'o TransportOption,
    depart: u32,
}

impl World<'_> {
    fn leg(&self, p: &Map<String, Value>) -> Result<(CityId, CityId, String), Value> {
        let (o, d) = (
            param(p, "origin").unwrap_or(""),
            param(p, "destination").unwrap_or(""),
        );
        let date = param(p, "date").unwrap_or("").to_string();
        match (self.city(o), self.city(d)) {
            (Some(a), Some(b)) if a != b => Ok((a, b, date)),
            _ => Err(no_data(
                &[
                    ("origin", o.into()),
                    ("destination", d.into()),
                    ("date", date.into()),
                ],
                "出发地或目的地不在本数据集的世界中（gtb只有目的地和出发城市的交通数据）",
            )),
        }
    }

    /// The services of a leg on a date by the given modes, departures ascending.
    fn services(&self, a: CityId, b: CityId, date: &str, modes: &[&str]) -> Vec<Service<'_>> {
        let (from, to) = (
            &self.res.cities[a as usize].name,
            &self.res.cities[b as usize].name,
        );
        let mut out = Vec::new();
        let trips = self.facts.trips.leg((a, b));
        for o in self
            .res
            .transport(a, b)
            .iter()
            .filter(|o| modes.contains(&o.mode))
        {
            let offset = small_hash_of(&[from, ">", to, ">", o.mode], 6) * 5;
            let mut times: Vec<u32> = pattern(o.mode).iter().map(|t| t + offset).collect();
            if let Some(w) = trips.and_then(|t| t.get(o.mode)?.get(date)) {
                times.extend(w.iter().map(|(d, _)| *d));
            }
            times.sort_unstable();
            times.dedup();
            out.extend(
                times
                    .into_iter()
                    .map(|depart| Service { option: o, depart }),
            );
        }
        out.sort_by_key(|s| (s.depart, s.option.mode));
        out
    }

    /// One service as compact JSON, written directly (a world writes millions): the text
    /// serde_json gives for the object of these fields in this order.
    fn service_text(&self, a: CityId, b: CityId, s: &Service, flight: bool) -> String {
        let o = s.option;
        let (from, to) = (
            &self.res.cities[a as usize].name,
            &self.res.cities[b as usize].name,
        );
        let mut buf = [0; 10];
        let depart = decimal(s.depart, &mut buf);
        let h = small_hash_of(&[from, ">", to, ">", o.mode, ">", depart], 9000) + 1000;
        let prefix = match o.mode {
            "高铁" => "G",
            "火车" => "K",
            _ => "GT",
        };
        let number_key = if flight { "flight_no" } else { "train_no" };
        let arrive = s.depart + o.minutes;
        let mut t = String::with_capacity(128);
        let mut number = |t: &mut String, n: u32| t.push_str(decimal(n, &mut buf));
        t.push_str("{\"");
        t.push_str(number_key);
        t.push_str("\":\"");
        t.push_str(prefix);
        number(&mut t, h);
        t.push_str("\",\"type\":");
        push_json_string(&mut t, o.mode);
        t.push_str(",\"depart\":\"");
        t.push_str(&gtb_plan::hhmm(s.depart));
        t.push_str("\",\"arrive\":\"");
        t.push_str(&gtb_plan::hhmm(arrive));
        t.push_str("\",\"minutes\":");
        number(&mut t, o.minutes);
        t.push_str(",\"price\":");
        number(&mut t, o.fare);
        if arrive >= 24 * 60 {
            t.push_str(",\"arrive_day_offset\":");
            number(&mut t, arrive / (24 * 60));
        }
        t.push('}');
        t
    }

    /// What every service of a mode shares beyond its times: the changes on the way (`via`,
    /// per mode) and, for flights, the airports.
    fn shared_json(&self, a: CityId, b: CityId, list: &[Service], head: &mut Value) {
        let mut via = Map::new();
        for s in list.iter().filter(|s| s.option.transfers > 0) {
            via.insert(s.option.mode.to_string(), s.option.via.clone().into());
        }
        if !via.is_empty() {
            head["via"] = Value::Object(via);
        }
        if list.iter().any(|s| s.option.mode == "飞机") {
            let c = |x: CityId| self.res.cities[x as usize].airports.join("/");
            head["airports"] = format!("{}→{}", c(a), c(b)).into();
        }
    }

    fn timetable(&self, p: &Map<String, Value>, modes: &[&str], flight: bool) -> Answer {
        let (a, b, date) = match self.leg(p) {
            Ok(x) => x,
            Err(v) => return v.into(),
        };
        let mut list = self.services(a, b, &date, modes);
        let bound = |k: &str| param(p, k).and_then(minutes);
        if let Some(lo) = bound("depart_time_start") {
            list.retain(|s| s.depart >= lo);
        }
        if let Some(hi) = bound("depart_time_end") {
            list.retain(|s| s.depart <= hi);
        }
        match param(p, "train_type_filter") {
            Some("high_speed" | "high_speed_and_emu") => list.retain(|s| s.option.mode == "高铁"),
            Some("regular") => list.retain(|s| s.option.mode == "火车"),
            _ => {}
        }
        if let Some(code) = param(p, "airport") {
            let names = |x: CityId| self.res.cities[x as usize].airports.join(" ");
            if !names(a).contains(code) && !names(b).contains(code) {
                list.clear();
            }
        }
        match param(p, "sort_by") {
            Some("depart_time_desc") => list.reverse(),
            Some("duration") => list.sort_by_key(|s| (s.option.minutes, s.depart)),
            Some("price") => list.sort_by_key(|s| (s.option.fare, s.depart)),
            _ => {}
        }
        let (from, to) = (
            &self.res.cities[a as usize].name,
            &self.res.cities[b as usize].name,
        );
        let what = if flight { "航班" } else { "火车/高铁" };
        if list.is_empty() {
            return no_data(
                &[
                    ("origin", from.as_str().into()),
                    ("destination", to.as_str().into()),
                    ("date", date.into()),
                ],
                &format!("gtb的交通表中没有符合条件的{what}"),
            )
            .into();
        }
        let mut head = json!({"status": "ok", "origin": from, "destination": to, "date": date,
            "total": list.len(), "schedule": TIMETABLE_NOTE});
        self.shared_json(a, b, &list, &mut head);
        let items = list
            .iter()
            .map(|s| self.service_text(a, b, s, flight))
            .collect();
        fit_texts(head, if flight { "flights" } else { "trains" }, items)
    }

    /// What a timetable call's answer depends on: the tool, the cities its origin and
    /// destination resolve to, and every other parameter as given. Two calls of the same
    /// signature (two spellings of a city, say) get the same answer. None for any other tool
    /// and for a call whose leg does not resolve.
    pub(crate) fn answer_signature(&self, tool: &str, p: &Map<String, Value>) -> Option<String> {
        if !matches!(tool, "travel_search_trains" | "travel_search_flights") {
            return None;
        }
        let (a, b, _) = self.leg(p).ok()?;
        let mut sig = format!("{tool}|{a}>{b}");
        for (k, v) in p
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "origin" | "destination"))
        {
            sig.push('|');
            sig.push_str(k);
            sig.push('=');
            sig.push_str(&v.to_string());
        }
        Some(sig)
    }

    pub(crate) fn trains(&self, p: &Map<String, Value>) -> Answer {
        self.timetable(p, &["高铁", "火车"], false)
    }

    pub(crate) fn flights(&self, p: &Map<String, Value>) -> Answer {
        self.timetable(p, &["飞机"], true)
    }
}

/// A string as a JSON string literal, as serde_json writes it: as it is between quotes when no
/// character needs escaping (the modes never do).
fn push_json_string(t: &mut String, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        t.push_str(&Value::from(s).to_string());
    } else {
        t.push('"');
        t.push_str(s);
        t.push('"');
    }
}

#[cfg(test)]
mod tests {
    use crate::World;
    use crate::witness::Facts;
    use serde_json::{Map, Value, json};

    fn call(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn issue27_calls_of_one_signature_get_one_answer() {
        let res = gtb_resources::load(&gtb_core::config::Paths::default()).unwrap();
        let w = World::new(&res, Facts::default());
        let tool = "travel_search_trains";
        let short = call(json!({"date": "2026-05-01", "destination": "杭州", "origin": "上海"}));
        let long = call(json!({"date": "2026-05-01", "destination": "杭州市", "origin": "上海市"}));
        let sig = |p| w.answer_signature(tool, p);
        // two spellings of the same cities: one signature, one answer
        assert!(sig(&short).is_some() && sig(&short) == sig(&long));
        assert_eq!(w.answer_valid(tool, &short), w.answer_valid(tool, &long));
        // any other parameter, the other direction or the other tool parts them
        let sorted = call(
            json!({"date": "2026-05-01", "destination": "杭州", "origin": "上海",
            "sort_by": "price"}),
        );
        let back = call(json!({"date": "2026-05-01", "destination": "上海", "origin": "杭州"}));
        let later = call(json!({"date": "2026-05-02", "destination": "杭州", "origin": "上海"}));
        for other in [&sorted, &back, &later] {
            assert!(sig(other).is_some() && sig(other) != sig(&short));
        }
        assert_ne!(
            w.answer_signature("travel_search_flights", &short),
            sig(&short)
        );
        // no sharing where the leg does not resolve, nor for other tools
        let nowhere = call(json!({"date": "2026-05-01", "destination": "杭州", "origin": "x"}));
        assert_eq!(sig(&nowhere), None);
        assert_eq!(w.answer_signature("maps_weather", &short), None);
    }
}
