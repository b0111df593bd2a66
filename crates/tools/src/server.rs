//! The HTTP side of `gtb tools serve`: HTTP/1.1 (hyper) on a tokio runtime, one task per
//! connection, keep-alive, any number of clients at once.
//!
//! Routes (with or without the `/v1` prefix, so that `TOOL_API_BASE` may end in `/v1` or not):
//! `POST /v1/chat/completions` (a tool simulation request, `crate::request`), `GET /v1/models`
//! and `GET /health`. Every other request gets a JSON error; a malformed simulation request gets
//! 400 naming the problem. Nothing is logged per request.

use crate::{Answerer, reply, request};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

/// The largest request body read (the harness's prompt carries up to 8 cached answers).
pub const MAX_BODY: usize = 16 << 20;

/// Accept connections on `listener` and answer them from `world` until the process ends.
pub async fn run(listener: tokio::net::TcpListener, world: Arc<dyn Answerer>) {
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            // out of file descriptors or a connection reset before accept: wait a moment
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        stream.set_nodelay(true).ok();
        let world = world.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let world = world.clone();
                async move { Ok::<_, Infallible>(route(req, world.as_ref()).await) }
            });
            // a client that goes away mid-request ends its connection, nothing else
            hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await
                .ok();
        });
    }
}

/// Bind `addr` and serve on a runtime of `threads` workers (0: one per core), calling `ready`
/// with the bound address (the port, when `addr` asks for any) before the first request.
pub fn serve_blocking(
    addr: SocketAddr,
    threads: usize,
    world: Arc<dyn Answerer>,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if threads > 0 {
        rt.worker_threads(threads);
    }
    let rt = rt.enable_all().build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("listening on {addr}: {e}"))?;
        ready(listener.local_addr()?);
        run(listener, world).await;
        Ok(())
    })
}

type Reply = Response<Full<Bytes>>;

fn respond(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn json(status: StatusCode, body: Vec<u8>) -> Reply {
    respond(status, "application/json", body)
}

fn error(status: StatusCode, kind: &str, message: &str) -> Reply {
    json(status, reply::error(kind, message))
}

async fn route(req: Request<Incoming>, world: &dyn Answerer) -> Reply {
    let path = req.uri().path();
    let path = path.strip_prefix("/v1").unwrap_or(path);
    match (req.method(), path) {
        (&Method::POST, "/chat/completions") => completions(req, world).await,
        (&Method::GET, "/models") => json(StatusCode::OK, reply::models()),
        (&Method::GET, "/health") => json(StatusCode::OK, br#"{"status":"ok"}"#.to_vec()),
        (_, "/chat/completions" | "/models" | "/health") => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "invalid_request_error",
            "method not allowed: POST /v1/chat/completions, GET /v1/models, GET /health",
        ),
        _ => error(
            StatusCode::NOT_FOUND,
            "not_found_error",
            "no such endpoint: this server answers POST /v1/chat/completions, GET /v1/models \
             and GET /health",
        ),
    }
}

async fn completions(req: Request<Incoming>, world: &dyn Answerer) -> Reply {
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request_error",
                &format!("request body over {} MiB", MAX_BODY >> 20),
            );
        }
        Err(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "request body could not be read",
            );
        }
    };
    let call = match request::parse(&body) {
        Ok(c) => c,
        Err(e) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", &e.0),
    };
    let answer = crate::served_answer(world, &call.tool, &call.params);
    let id = reply::completion_id(&call.tool, &call.params);
    if call.stream {
        let mut r = respond(
            StatusCode::OK,
            "text/event-stream",
            reply::completion_events(&id, &answer),
        );
        r.headers_mut()
            .insert("cache-control", HeaderValue::from_static("no-cache"));
        r
    } else {
        json(StatusCode::OK, reply::completion(&id, &answer))
    }
}
