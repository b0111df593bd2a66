//! `gtb tools serve` on loopback (issue 28): latency and throughput of simulation requests at
//! concurrency 1 and 16, each client on its own keep-alive connection, as the harness's
//! OpenAI client keeps them. The calls are the split's own cached calls (every tool), so each
//! request is answered by the world (the server never reads the cache).
//!
//!     gtb-bench serve        (builds the default split, then serves it)

use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests per run.
const REQUESTS: usize = 4000;

/// The calls of a split's cache files: (tool, params), every k-th key of each tool.
fn calls(split: &Path, per_tool: usize) -> anyhow::Result<Vec<(String, Map<String, Value>)>> {
    let mut out = Vec::new();
    for tool in gtb_world::TOOLS {
        let entries = gtb_world::cache::read_cache(&gtb_world::cache_path(split, tool))?;
        let step = (entries.len() / per_tool).max(1);
        for key in entries.keys().step_by(step).take(per_tool) {
            let pairs: Vec<(String, Value)> = serde_json::from_str(key)?;
            out.push((tool.to_string(), pairs.into_iter().collect()));
        }
    }
    anyhow::ensure!(!out.is_empty(), "{}: no cached calls", split.display());
    Ok(out)
}

/// The harness's simulation request for a call (its prompt format, streamed).
fn request(addr: SocketAddr, tool: &str, params: &Map<String, Value>) -> Vec<u8> {
    let user = format!(
        "请为以下参数生成 {tool} 工具的模拟返回结果：\n\n参数：{}\n\n要求：\n1. 直接返回结果内容\n",
        serde_json::to_string_pretty(params).expect("JSON")
    );
    let body = serde_json::to_vec(&json!({
        "model": "tool-sim",
        "messages": [
            {"role": "system", "content": format!("你是一个工具模拟器，需要模拟 {tool} 工具的真实返回结果。")},
            {"role": "user", "content": user},
        ],
        "temperature": 0.0,
        "stream": true,
    }))
    .expect("JSON");
    let mut req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(&body);
    req
}

/// Send one request on a keep-alive connection and read its whole reply.
fn exchange(conn: &mut BufReader<TcpStream>, req: &[u8]) -> anyhow::Result<()> {
    conn.get_mut().write_all(req)?;
    let mut len = None;
    let mut line = String::new();
    let mut status = String::new();
    loop {
        line.clear();
        conn.read_line(&mut line)?;
        if status.is_empty() {
            status = line.clone();
        }
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = Some(v.trim().parse::<usize>()?);
        }
    }
    anyhow::ensure!(status.contains(" 200 "), "reply {status:?}");
    let mut body = vec![0; len.ok_or_else(|| anyhow::anyhow!("no content-length"))?];
    conn.read_exact(&mut body)?;
    Ok(())
}

/// `clients` connections sending `REQUESTS` requests in all: wall time and each latency.
fn run(
    addr: SocketAddr,
    reqs: &Arc<Vec<Vec<u8>>>,
    clients: usize,
) -> anyhow::Result<(Duration, Vec<Duration>)> {
    let t = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|c| {
            let reqs = reqs.clone();
            std::thread::spawn(move || -> anyhow::Result<Vec<Duration>> {
                let mut conn = BufReader::new(TcpStream::connect(addr)?);
                conn.get_ref().set_nodelay(true)?;
                let mut lat = Vec::new();
                for i in (c..REQUESTS).step_by(clients) {
                    let t = Instant::now();
                    exchange(&mut conn, &reqs[i % reqs.len()])?;
                    lat.push(t.elapsed());
                }
                Ok(lat)
            })
        })
        .collect();
    let mut lat = Vec::with_capacity(REQUESTS);
    for w in workers {
        lat.extend(
            w.join()
                .map_err(|_| anyhow::anyhow!("a client panicked"))??,
        );
    }
    Ok((t.elapsed(), lat))
}

/// Serve `split` in this process and time requests at concurrency 1 and 16.
pub fn bench(split: &Path) -> anyhow::Result<()> {
    let t = Instant::now();
    let world = gtb_tools::open_world(split)?;
    let t_open = t.elapsed();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        gtb_tools::server::serve_blocking(any, 0, world, |a| tx.send(a).expect("bench waits"))
    });
    let addr = rx.recv()?;
    let calls = calls(split, 100)?;
    let reqs: Arc<Vec<Vec<u8>>> =
        Arc::new(calls.iter().map(|(t, p)| request(addr, t, p)).collect());
    println!(
        "gtb tools serve: world of {} opened in {:.3}s; {} distinct calls of the split's cache",
        split.display(),
        t_open.as_secs_f64(),
        reqs.len()
    );
    run(addr, &reqs, 4)?; // warm-up
    for clients in [1, 16] {
        let (wall, mut lat) = run(addr, &reqs, clients)?;
        lat.sort();
        let ms = |q: f64| lat[((lat.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
        println!(
            "gtb tools serve, concurrency {clients}: {REQUESTS} requests in {:.3}s = {:.0} req/s; latency p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            wall.as_secs_f64(),
            REQUESTS as f64 / wall.as_secs_f64(),
            ms(0.5),
            ms(0.9),
            ms(0.99),
            ms(1.0)
        );
    }
    Ok(())
}
