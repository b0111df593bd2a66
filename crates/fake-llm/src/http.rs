//! Plain HTTP/1.1 on the wire: a request read, a reply written (whole, cut in half, or as
//! server-sent events in chunks), and the canned replies sent instead of a completion.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub(crate) struct Req {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: HashMap<String, String>,
    pub(crate) body: Vec<u8>,
}

pub(crate) async fn read_req(
    sock: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<Req>> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let mut lines = head.split("\r\n");
            let first = lines.next().unwrap_or("");
            let mut parts = first.split_whitespace();
            let method = parts.next().unwrap_or("").to_string();
            let path = parts.next().unwrap_or("").to_string();
            let headers: HashMap<String, String> = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect();
            let len: usize = headers
                .get("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let mut chunk = [0u8; 65536];
                let n = sock.read(&mut chunk).await?;
                if n == 0 {
                    return Ok(None);
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[end + 4..end + 4 + len].to_vec();
            buf.drain(..end + 4 + len);
            return Ok(Some(Req {
                method,
                path,
                headers,
                body,
            }));
        }
        let mut chunk = [0u8; 65536];
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

pub(crate) async fn respond(
    sock: &mut tokio::net::TcpStream,
    code: u16,
    extra: &[(&str, String)],
    body: &[u8],
    truncate: bool,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {code} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        reason(code),
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    sock.write_all(head.as_bytes()).await?;
    if truncate {
        sock.write_all(&body[..body.len() / 2]).await?;
        sock.flush().await?;
        return Err(std::io::Error::other("truncated on purpose"));
    }
    sock.write_all(body).await?;
    sock.flush().await
}

/// A reply the fake sends instead of a completion: an error, or the answer to a probe.
pub(crate) struct Canned {
    code: u16,
    extra: Vec<(&'static str, String)>,
    body: String,
    /// the pause a 429 announces, booked (`FakeStats::announce`) as it is sent
    pub(crate) announces: Option<Duration>,
}

impl Canned {
    /// A reply with no extra headers.
    pub(crate) fn new(code: u16, body: impl Into<String>) -> Canned {
        Canned {
            code,
            extra: Vec::new(),
            body: body.into(),
            announces: None,
        }
    }
    /// A 429 asking for a pause of `wait` (its Retry-After header in whole seconds).
    pub(crate) fn retry_after(wait: Duration, body: &str) -> Canned {
        Canned {
            extra: vec![("retry-after", wait.as_secs().to_string())],
            announces: Some(wait),
            ..Canned::new(429, body)
        }
    }
}

/// Send a canned reply (the connection stays open).
pub(crate) async fn send(sock: &mut tokio::net::TcpStream, c: &Canned) -> std::io::Result<()> {
    respond(sock, c.code, &c.extra, c.body.as_bytes(), false).await
}

/// A completion sent as server-sent events in HTTP chunks, as llama.cpp streams: a role
/// chunk, the content in pieces of a few characters (`delay` apart), the finish chunk, the
/// usage chunk (`choices: []`), `[DONE]`.
pub(crate) async fn respond_stream(
    sock: &mut tokio::net::TcpStream,
    reply: &str,
    delay: Duration,
) -> std::io::Result<()> {
    let v: Value = serde_json::from_str(reply).unwrap_or(Value::Null);
    let msg = &v["choices"][0]["message"];
    let content = match &msg["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    };
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    sock.write_all(head.as_bytes()).await?;
    let chunk = |delta: Value, finish: Value| json!({"id": v["id"], "object": "chat.completion.chunk", "model": v["model"], "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": null}),
        Value::Null,
    )];
    let chars: Vec<char> = content.chars().collect();
    for piece in chars.chunks(8) {
        let text: String = piece.iter().collect();
        events.push(chunk(json!({"content": text}), Value::Null));
    }
    events.push(chunk(json!({}), v["choices"][0]["finish_reason"].clone()));
    events.push(json!({"id": v["id"], "object": "chat.completion.chunk", "choices": [], "usage": v["usage"]}));
    for (i, e) in events.iter().enumerate() {
        if i > 0 && !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        write_chunk(sock, format!("data: {e}\n\n").as_bytes()).await?;
    }
    write_chunk(sock, b"data: [DONE]\n\n").await?;
    sock.write_all(b"0\r\n\r\n").await?;
    sock.flush().await
}

async fn write_chunk(sock: &mut tokio::net::TcpStream, data: &[u8]) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n", data.len()).as_bytes())
        .await?;
    sock.write_all(data).await?;
    sock.write_all(b"\r\n").await?;
    sock.flush().await
}
