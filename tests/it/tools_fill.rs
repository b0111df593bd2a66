//! Issue 28, item 3: `gtb tools fill` adds the calls a finished run of the release's harness
//! missed (its `<tool>_missed.json` files) to the split's cache, answered as `gtb tools serve`
//! answers them, so that a rerun hits; bad input names the file, record and field.

use crate::tools_serve::{Served, cached_calls, content, gtb, http, params, sim_body, split};
use serde_json::{Map, Value, json};
use std::path::Path;

/// A `<tool>_missed.json` in the harness's format: each call's parameters as
/// `json.dumps(kwargs, sort_keys=True, ensure_ascii=False)`, with what a simulator invented.
fn missed_file(calls: &[Map<String, Value>]) -> String {
    let records: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let sorted: std::collections::BTreeMap<&String, &Value> = p.iter().collect();
            let params = gtb_core::pyjson::to_string(&sorted);
            json!({"params": params, "simulated_result": "模拟的结果：某某酒店，电话 123", "timestamp": 1_764_000_000.5 + i as f64})
        })
        .collect();
    serde_json::to_string_pretty(&records).unwrap()
}

/// `gtb tools fill SPLIT --missed DIR`.
fn fill(split: &Path, missed: &Path) -> std::process::Output {
    gtb(&[
        "tools",
        "fill",
        split.to_str().unwrap(),
        "--missed",
        missed.to_str().unwrap(),
    ])
}

fn sha256(path: &Path) -> String {
    gtb_core::digest::sha256_file(path).unwrap()
}

fn manifest_sha(split: &Path, tool: &str) -> String {
    let m: Value =
        serde_json::from_slice(&std::fs::read(split.join("manifest.json")).unwrap()).unwrap();
    m["world"]["files"][format!("sandbox_cache/{tool}_cache.json")]["sha256"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn issue28_fill_adds_the_missed_calls_so_a_rerun_hits() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("split");
    crate::common::copy_dir(split(), &copy);
    let calls = cached_calls(&copy, 3);
    let city = calls
        .iter()
        .find_map(|c| (c.0 == "search_poi").then(|| c.1["city"].clone()))
        .unwrap();
    let new_poi = params(json!({"city": city, "keywords": "没有这种地方的关键词", "page": 1}));
    let new_weather = params(json!({"location": city, "date": "2027-01-05"}));
    let (_, held, held_answer) = calls.iter().find(|c| c.0 == "search_poi").unwrap().clone();
    // the harness writes its misses beside the cache it reads (SANDBOX_CACHE_DIR)
    let missed = copy.join("sandbox_cache");
    // the same call missed on every trial, and a call the cache already holds
    std::fs::write(
        missed.join("search_poi_missed.json"),
        missed_file(&[new_poi.clone(), held.clone(), new_poi.clone()]),
    )
    .unwrap();
    std::fs::write(
        missed.join("maps_weather_missed.json"),
        missed_file(std::slice::from_ref(&new_weather)),
    )
    .unwrap();
    std::fs::write(missed.join("notes.txt"), "not a missed-calls file").unwrap();
    let before = std::fs::read(gtb_world::cache_path(&copy, "plan_route")).unwrap();
    let o = fill(&copy, &missed);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains("search_poi: 3 missed records, 2 distinct calls"),
        "{report}"
    );
    let world = gtb_tools::open_world(&copy).unwrap();
    let served = Served::start(&copy);
    for (tool, p) in [
        ("search_poi", &new_poi),
        ("maps_weather", &new_weather),
        ("search_poi", &held),
    ] {
        let path = gtb_world::cache_path(&copy, tool);
        let cache: Map<String, Value> =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let cached = cache
            .get(&gtb_world::cache_key(p))
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{tool} {p:?} not cached"));
        assert_eq!(cached, gtb_tools::served_answer(world.as_ref(), tool, p));
        assert!(
            !cached.contains("模拟的结果"),
            "the simulator's invention is never cached"
        );
        // what the server answers for the call is what the rerun now reads from the cache
        let r = http(
            served.addr,
            "POST",
            "/v1/chat/completions",
            &[],
            &sim_body(tool, p, true, &[]),
        );
        assert_eq!(content(&r), cached);
        assert_eq!(
            manifest_sha(&copy, tool),
            sha256(&path),
            "{tool}: the manifest's sha256"
        );
    }
    let cache: Map<String, Value> =
        serde_json::from_slice(&std::fs::read(gtb_world::cache_path(&copy, "search_poi")).unwrap())
            .unwrap();
    assert_eq!(
        cache[&gtb_world::cache_key(&held)],
        held_answer.as_str(),
        "an entry is never replaced"
    );
    assert_eq!(
        std::fs::read(gtb_world::cache_path(&copy, "plan_route")).unwrap(),
        before,
        "a tool without misses is untouched"
    );
    // filling again changes no byte
    let snapshot: Vec<Vec<u8>> = ["search_poi", "maps_weather"]
        .iter()
        .map(|t| std::fs::read(gtb_world::cache_path(&copy, t)).unwrap())
        .collect();
    let manifest = std::fs::read(copy.join("manifest.json")).unwrap();
    let o = fill(&copy, &missed);
    assert!(o.status.success());
    let again: Vec<Vec<u8>> = ["search_poi", "maps_weather"]
        .iter()
        .map(|t| std::fs::read(gtb_world::cache_path(&copy, t)).unwrap())
        .collect();
    assert_eq!(snapshot, again);
    assert_eq!(manifest, std::fs::read(copy.join("manifest.json")).unwrap());
}

#[test]
fn issue28_fill_bad_input_names_the_file_record_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("split");
    crate::common::copy_dir(split(), &copy);
    let before = std::fs::read(copy.join("manifest.json")).unwrap();
    let good = r#"{"params": "{\"city\": \"杭州\", \"keywords\": \"景点\"}", "simulated_result": "x", "timestamp": 1.0}"#;
    let cases = [
        (
            "search_poi",
            "{\"params\": 1}".to_string(),
            vec!["search_poi_missed.json", "not a JSON array"],
        ),
        (
            "search_poi",
            format!("[{good}, 7]"),
            vec!["search_poi_missed.json", "record 2", "not an object"],
        ),
        (
            "search_poi",
            format!("[{good}, {{\"timestamp\": 1}}]"),
            vec!["record 2", "field params: missing"],
        ),
        (
            "maps_geo",
            format!("[{good}, {good}, {{\"params\": 5}}]"),
            vec![
                "maps_geo_missed.json",
                "record 3",
                "field params: not a string",
            ],
        ),
        (
            "search_poi",
            r#"[{"params": "{\"city\": "}]"#.to_string(),
            vec!["record 1", "field params: not JSON"],
        ),
        (
            "search_poi",
            r#"[{"params": "[1]"}]"#.to_string(),
            vec!["record 1", "field params: not a JSON object"],
        ),
        (
            "teleport",
            format!("[{good}]"),
            vec!["teleport_missed.json", "not one of the release's tools"],
        ),
    ];
    for (tool, text, wants) in cases {
        let missed = tempfile::tempdir().unwrap();
        std::fs::write(missed.path().join("maps_weather_missed.json"), "[]").unwrap();
        std::fs::write(missed.path().join(format!("{tool}_missed.json")), &text).unwrap();
        let o = fill(&copy, missed.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{text}: accepted");
        for w in wants {
            assert!(err.contains(w), "{w:?} not in {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(
        std::fs::read(copy.join("manifest.json")).unwrap(),
        before,
        "bad input writes nothing"
    );
    let o = fill(&tmp.path().join("nowhere"), tmp.path());
    assert!(
        o.status.success(),
        "a folder without missed files has nothing to fill"
    );
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(
        empty.path().join("search_poi_missed.json"),
        format!("[{good}]"),
    )
    .unwrap();
    let o = fill(&tmp.path().join("nowhere"), empty.path());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a published split"));
}
