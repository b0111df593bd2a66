//! Issue 28: the world a split is played in. Every build writes `sandbox_cache/<tool>_cache.json`
//! for the release's ten tools and `poi2category/all_poi_by_city.json`; a reference agent
//! replays each witness plan as tool calls, looks them up with the release's key in the written
//! files, and finds every call answered with the names, hours, prices, fares and minutes the
//! witness uses; the plan it assembles from the answers scores as the witness does. The bytes
//! are the same for any thread count and through shards and merge.

use crate::common::{build, config_in, root, shared};
use gtb_ops::solve::{read_plans, read_tasks};
use gtb_plan::{Activity, Plan, Segment};
use gtb_score::{PoiDb, score_plan};
use gtb_world::cache::{CacheFile, cache_key, cache_path, read_cache};
use gtb_world::{TOOLS, World};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A built split of `n` tasks with `threads` threads: (its temp dir, the split folder).
fn built(n: usize, threads: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config_in(dir.path());
    cfg.run.n = n;
    let s = build(&cfg, threads);
    let folder = s.splits[0].path.parent().unwrap().to_path_buf();
    (dir, folder)
}

fn caches(split: &Path) -> BTreeMap<&'static str, CacheFile> {
    TOOLS
        .iter()
        .map(|t| (*t, read_cache(&cache_path(split, t)).unwrap()))
        .collect()
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// The reference agent: calls by tool, hits by tool, and the plan assembled from the answers.
#[derive(Default)]
struct Agent {
    calls: BTreeMap<&'static str, (usize, usize)>,
    misses: Vec<String>,
}

impl Agent {
    /// Look a call up with the release's key; the answer as JSON, or `None` on a miss.
    fn call(
        &mut self,
        c: &BTreeMap<&'static str, CacheFile>,
        tool: &'static str,
        p: Value,
    ) -> Option<Value> {
        let key = cache_key(&obj(p));
        let e = self.calls.entry(tool).or_default();
        e.0 += 1;
        match c[tool].get(&key) {
            Some(a) => {
                e.1 += 1;
                Some(serde_json::from_str(a).unwrap())
            }
            None => {
                self.misses.push(format!("{tool} {key}"));
                None
            }
        }
    }

    /// The POI the answer to a search by its name lists under that name.
    fn poi(&mut self, c: &BTreeMap<&'static str, CacheFile>, name: &str, city: &str) -> Value {
        let a = self.call(c, "search_poi", json!({"keywords": name, "city": city}));
        let hit = a.and_then(|a| {
            a["pois"]
                .as_array()?
                .iter()
                .find(|p| p["name"] == json!(name))
                .cloned()
        });
        hit.unwrap_or_else(|| panic!("search_poi {name} in {city}: the answer does not list it"))
    }

    /// Replay a witness plan; returns the plan rebuilt from the answers.
    fn replay(&mut self, c: &BTreeMap<&'static str, CacheFile>, plan: &Plan) -> Plan {
        let mut out = plan.clone();
        for day in &mut out.days {
            for seg in &mut day.city_segments {
                match seg {
                    Segment::Intercity(t) => self.leg(c, &day.date, t),
                    Segment::City(b) => {
                        for a in &mut b.activities {
                            self.activity(c, &b.city, a);
                        }
                    }
                }
            }
        }
        out
    }

    fn leg(
        &mut self,
        c: &BTreeMap<&'static str, CacheFile>,
        date: &str,
        t: &mut gtb_plan::Intercity,
    ) {
        let (tool, list) = match t.transport_mode.as_str() {
            "高铁" | "火车" => ("travel_search_trains", "trains"),
            "飞机" => ("travel_search_flights", "flights"),
            _ => return,
        };
        let a = self.call(
            c,
            tool,
            json!({"origin": t.from_city, "destination": t.to_city, "date": date}),
        );
        let Some(a) = a else { return };
        let found = a[list].as_array().and_then(|l| {
            l.iter()
                .find(|s| {
                    s["depart"] == json!(t.start_time) && s["type"] == json!(t.transport_mode)
                })
                .cloned()
        });
        let s = found.unwrap_or_else(|| {
            panic!(
                "{tool} {date} {}→{}: no {} at {} in {a}",
                t.from_city, t.to_city, t.transport_mode, t.start_time
            )
        });
        assert_eq!(s["arrive"], json!(t.end_time), "{s}");
        assert_eq!(s["price"], json!(t.avg_cost), "{s}");
        t.end_time = s["arrive"].as_str().unwrap().to_string();
        t.avg_cost = s["price"].as_u64().unwrap() as u32;
    }

    fn activity(&mut self, c: &BTreeMap<&'static str, CacheFile>, city: &str, a: &mut Activity) {
        match a {
            Activity::Attraction { location, .. } => {
                let p = self.poi(c, location, city);
                let id = p["id"].as_str().unwrap();
                let d = self
                    .call(c, "get_poi_detail", json!({"id": id}))
                    .expect("detail");
                assert_eq!(d["name"], json!(location));
                assert_eq!(d["opening_hours"], p["opening_hours"]);
                *location = p["name"].as_str().unwrap().to_string();
            }
            Activity::Food {
                location, avg_cost, ..
            }
            | Activity::Hotel {
                location, avg_cost, ..
            } => {
                let p = self.poi(c, location, city);
                assert_eq!(p["avg_cost_per_person"], json!(*avg_cost), "{p}");
                *avg_cost = p["avg_cost_per_person"].as_u64().unwrap() as u32;
            }
            Activity::IntracityTransport {
                from,
                to,
                start_time,
                end_time,
                ..
            } => {
                // a name the release reads as a coordinate is sent as the POI's `location`
                let mut place = |x: &str| {
                    if x.chars().take(3).all(|ch| ch.is_ascii_digit()) {
                        self.poi(c, x, city)["location"]
                            .as_str()
                            .unwrap()
                            .to_string()
                    } else {
                        x.to_string()
                    }
                };
                let (o, d) = (place(from), place(to));
                let r = self.call(
                    c,
                    "plan_route",
                    json!({"origin": o, "destination": d, "city": city}),
                );
                let Some(r) = r else { return };
                let m = r["minutes"].as_u64().unwrap() as u32;
                let span = gtb_world::witness::span(start_time, end_time).unwrap();
                assert_eq!(m, span, "{from} → {to}: {r}");
                let start = gtb_world::names::minutes(start_time).unwrap();
                *end_time = gtb_plan::hhmm(start + m);
            }
            Activity::Rest { .. } => {}
        }
    }
}

/// Item 4: the reference agent replays every witness of a 40-task build from the cache files
/// alone: every call hits, every answer carries the witness's names, hours, prices, fares and
/// minutes, and the assembled plan scores as the witness does against the world's table.
#[test]
fn issue28_reference_agent_replays_every_witness_from_the_cache() {
    let (_dir, split) = built(40, 2);
    let c = caches(&split);
    let tasks = read_tasks(&split.join("test.jsonl")).unwrap();
    let lines = read_plans(&split.join("plans.jsonl")).unwrap();
    let res = gtb_ops::load_resources(&config_in(Path::new("/nonexistent"))).unwrap();
    let db = PoiDb::with_stand_ins(&res);
    let mut agent = Agent::default();
    for (t, l) in tasks.iter().zip(&lines) {
        let plan: Plan = serde_json::from_value(l.plan.clone().unwrap()).unwrap();
        let assembled = agent.replay(&c, &plan);
        let v = |p: &Plan| serde_json::to_value(p).unwrap();
        let (w, a) = (
            score_plan(t, &v(&plan), &l.compromises, &db),
            score_plan(t, &v(&assembled), &l.compromises, &db),
        );
        assert!(a.validity.valid, "{}: {:?}", t.task_id, a.validity.issues);
        assert_eq!(
            a.utility.total_score, w.utility.total_score,
            "{}",
            t.task_id
        );
    }
    for (tool, (n, hits)) in &agent.calls {
        println!("issue28 reference agent: {tool}: {hits}/{n} hits");
    }
    assert!(
        agent.misses.is_empty(),
        "misses: {:#?}",
        &agent.misses[..agent.misses.len().min(20)]
    );
    assert!(agent.calls["plan_route"].0 > 0 && agent.calls["search_poi"].0 > 0);
}

/// Every pre-populated call passes the release's parameter rules, every answer is at most
/// 2,000 characters and is the world's answer to its call; the manifest lists every file with
/// its sha256; the table lists the stand-ins the witnesses use, labelled modelled.
#[test]
fn issue28_every_cached_call_is_valid_and_listed() {
    let (_dir, split) = built(12, 2);
    let m: Value =
        serde_json::from_slice(&std::fs::read(split.join("manifest.json")).unwrap()).unwrap();
    let world = gtb_ops::world::open(&split).unwrap();
    for (tool, entries) in caches(&split) {
        assert!(!entries.is_empty(), "{tool}: no entries");
        for (k, answer) in entries.iter().step_by(7) {
            let pairs: Vec<(String, Value)> = serde_json::from_str(k).unwrap();
            let params: Map<String, Value> = pairs.into_iter().collect();
            assert_eq!(&cache_key(&params), k);
            gtb_world::validate::validate(tool, &params)
                .unwrap_or_else(|e| panic!("{tool} {k}: {e}"));
            assert!(
                answer.chars().count() <= gtb_world::MAX_ANSWER_CHARS,
                "{tool} {k}"
            );
            assert_eq!(&world.answer(tool, &params).unwrap(), answer, "{tool} {k}");
        }
        let rel = format!("sandbox_cache/{tool}_cache.json");
        let sha = gtb_core::digest::sha256_file(&split.join(&rel)).unwrap();
        assert_eq!(m["world"]["files"][&rel]["sha256"], json!(sha), "{rel}");
    }
    let table: Value =
        serde_json::from_slice(&std::fs::read(split.join(gtb_world::write::POI_TABLE)).unwrap())
            .unwrap();
    let lines = read_plans(&split.join("plans.jsonl")).unwrap();
    let used: Vec<String> = lines
        .iter()
        .filter_map(|l| l.stand_ins.as_ref())
        .flat_map(|s| s.locations.clone())
        .collect();
    assert!(!used.is_empty(), "the witnesses use stand-ins");
    for name in used.iter().filter(|n| !n.starts_with("停车场")) {
        let (_, city) = gtb_plan::parse_stand_in(name).unwrap();
        let row = table[city]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == json!(name));
        let row = row.unwrap_or_else(|| panic!("{name} is not in the world's table"));
        assert_eq!(row["modelled"], json!(true));
    }
    // `add_answers` (for `gtb tools fill`): a new key is added in canonical bytes and the
    // manifest follows; a known key with another answer is kept and reported
    let (known, _) = caches(&split)["web_search"]
        .iter()
        .next()
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap();
    let fresh = cache_key(&obj(json!({"query": "issue28 fill"})));
    let added = gtb_world::add_answers(
        &split,
        "web_search",
        &[(fresh.clone(), "x".into()), (known.clone(), "y".into())],
    )
    .unwrap();
    assert_eq!((added.added, added.conflicting.clone()), (1, vec![known]));
    let path = cache_path(&split, "web_search");
    let entries = read_cache(&path).unwrap();
    assert_eq!(entries[&fresh], "x");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        gtb_world::cache::cache_bytes(&entries)
    );
    let m: Value =
        serde_json::from_slice(&std::fs::read(split.join("manifest.json")).unwrap()).unwrap();
    let rel = "sandbox_cache/web_search_cache.json";
    assert_eq!(m["world"]["files"][rel]["sha256"], json!(added.sha256));
    assert_eq!(m["world"]["files"][rel]["entries"], json!(entries.len()));
    assert!(gtb_world::add_answers(&split, "nope", &[]).is_err());
    // the independent checker (the release's resolution rules) keeps every witness within its
    // contract against the world's table too
    let out = std::process::Command::new("python3")
        .arg(root().join("tests/check_witness.py"))
        .arg(split.join("test.jsonl"))
        .arg(split.join("plans.jsonl"))
        .arg("--poi")
        .arg(split.join(gtb_world::write::POI_TABLE))
        .output()
        .expect("python3 runs tests/check_witness.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The honest no-data answers, and the ToolError cases.
#[test]
fn issue28_no_data_and_invalid_calls() {
    let res = gtb_ops::load_resources(&config_in(Path::new("/nonexistent"))).unwrap();
    let w = World::new(res, gtb_world::witness::Facts::default());
    let ask = |tool: &str, p: Value| w.answer(tool, &obj(p));
    let weather = ask(
        "maps_weather",
        json!({"location": "杭州", "date": "2026-05-01"}),
    )
    .unwrap();
    assert!(gtb_world::is_no_data(&weather) && weather.contains("no forecast for this date"));
    let web = ask("web_search", json!({"query": "杭州攻略"})).unwrap();
    assert!(web.contains("not available offline"));
    let e = ask("search_poi", json!({"keywords": "景点"})).unwrap_err();
    assert!(
        matches!(&e, gtb_world::ToolError::Invalid { message, .. } if message.contains("city")),
        "{e}"
    );
    assert!(matches!(
        ask("nope", json!({})),
        Err(gtb_world::ToolError::UnknownTool(_))
    ));
    // a restaurant without coordinates gets none
    let food =
        w.db.city("杭州市")
            .iter()
            .find(|p| p.kind == gtb_score::resolver::PoiKind::Food && !p.stand_in);
    if let Some(f) = food {
        let g = ask("maps_geo", json!({"address": f.name, "city": "杭州"})).unwrap();
        assert!(
            gtb_world::is_no_data(&g) && !g.contains("\"location\""),
            "{g}"
        );
    }
    let trains = ask(
        "travel_search_trains",
        json!({"origin": "北京", "destination": "杭州市", "date": "2026-05-01"}),
    )
    .unwrap();
    assert!(
        trains.contains("modelled") && trains.contains("\"G"),
        "{trains}"
    );
}

/// The world's bytes are the same with 1 and 2 threads, and through `--shard` and `gtb merge`.
#[test]
fn issue28_world_bytes_are_deterministic_across_threads_and_shards() {
    let (_a, one) = built(16, 1);
    let (_b, two) = built(16, 2);
    let files = gtb_world::write::world_files();
    let sha = |d: &Path, f: &str| gtb_core::digest::sha256_file(&d.join(f)).unwrap();
    for f in &files {
        assert_eq!(sha(&one, f), sha(&two, f), "{f}");
    }
    let dir = tempfile::tempdir().unwrap();
    let gtb = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_gtb"))
            .args(args)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let d = |s: &str| dir.path().join(s).display().to_string();
    for i in 0..2 {
        gtb(&[
            "build",
            "--n",
            "16",
            "--shard",
            &format!("{i}/2"),
            "--out",
            &d(&format!("s{i}")),
        ]);
    }
    gtb(&["merge", &d("s0"), &d("s1"), "--out", &d("merged")]);
    let merged = dir.path().join("merged");
    for f in &files {
        assert_eq!(sha(&one, f), sha(&merged, f), "{f}");
    }
}

/// Every city form gtb writes passes the release's administrative-name check
/// (`tools/get_adcode.py`'s rule) over the CPCA codes of `../shared`.
#[test]
fn issue28_city_forms_pass_the_admin_check() {
    let Some(shared) = shared() else { return };
    let text =
        std::fs::read_to_string(shared.join("reference_data/cpca_adcodes/adcodes_hierarchy.csv"))
            .unwrap();
    let mut full: Vec<String> = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (name, level, province, prefecture) = (f[1], f[2], f[3], f[4]);
        let pre = if prefecture == "市辖区" || prefecture == province {
            ""
        } else {
            prefecture
        };
        full.push(match level {
            "province" => name.to_string(),
            "prefecture" if name == "市辖区" => continue,
            "prefecture" => format!("{province}{name}"),
            _ => format!("{province}{pre}{name}"),
        });
    }
    let valid = |n: &str| {
        ["", "市", "省", "区", "县", "州", "盟", "旗", "地区"]
            .iter()
            .any(|s| full.iter().any(|f| f.ends_with(&format!("{n}{s}"))))
    };
    let res = gtb_ops::load_resources(&config_in(Path::new("/nonexistent"))).unwrap();
    let mut bad = Vec::new();
    for c in &res.cities {
        for f in gtb_world::names::city_forms(&c.name) {
            if !valid(&f) {
                bad.push(f);
            }
        }
    }
    // 漠河市 is listed under its former name 漠河县 in the CPCA codes (raw_data/SOURCES.md)
    bad.retain(|f| !f.starts_with("漠河"));
    assert!(
        bad.is_empty(),
        "city forms the release's check would refuse: {bad:?}"
    );
}
