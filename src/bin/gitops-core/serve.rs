//! `gitops-core serve`: the JSON-lines protocol of `gitops_core::protocol` on standard input
//! and output.
//!
//! This file does the I/O only: it reads lines with a bounded buffer (a line over the size
//! limit is discarded as it streams past, never held in memory), hands each line to the
//! sans-IO [`Server`] and writes each response line, flushing after each one.

use std::io::{self, BufRead, Write};

use gitops_core::protocol::Server;

use crate::common::CliError;

pub const USAGE: &str = "\
usage: gitops-core serve [--max-request-bytes N]

Reads one JSON request per line on standard input and writes one JSON response per line on
standard output, in order. End of input ends the server (exit status 0).

options:
  --max-request-bytes N   longest request line accepted, in bytes (default 16777216)";

/// Runs the command.
pub fn run(mut args: lexopt::Parser) -> Result<u8, CliError> {
    use lexopt::prelude::*;
    let mut limit = Server::DEFAULT_MAX_REQUEST_BYTES;
    while let Some(arg) = args.next()? {
        match arg {
            Long("max-request-bytes") => {
                let v = args.value()?;
                let text = v.to_string_lossy();
                limit = match text.parse::<u64>() {
                    Ok(n) if n > 0 => n,
                    _ => {
                        return Err(CliError::Usage(format!(
                            "--max-request-bytes: expected a positive number of bytes, found `{text}`"
                        )));
                    }
                };
            }
            Short('h') | Long("help") => {
                outln!("{USAGE}");
                return Ok(0);
            }
            other => {
                let message = crate::completion::unexpected(other, USAGE);
                return Err(CliError::Usage(format!("{message}\n{USAGE}")));
            }
        }
    }
    // Each script evaluation stops after 1 s of wall clock, whatever the counts say.
    let mut server =
        Server::with_max_request_bytes(limit).with_interrupt(crate::common::deadline());
    let stdin = io::stdin();
    let stdout = io::stdout();
    match serve(&mut stdin.lock(), &mut stdout.lock(), &mut server) {
        Ok(()) => Ok(0),
        // The client closed its end: nobody is left to answer.
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(Failure::Write(e)) => Err(CliError::Input(format!("writing standard output: {e}"))),
        Err(Failure::Read(e)) => Err(CliError::Input(format!("reading standard input: {e}"))),
    }
}

/// Why the loop stopped before the end of input.
#[derive(Debug)]
pub enum Failure {
    /// Reading the input failed.
    Read(io::Error),
    /// Writing the output failed.
    Write(io::Error),
}

/// Answers every line of `input` on `output` until the end of input.
pub fn serve(
    input: &mut impl BufRead,
    output: &mut impl Write,
    server: &mut Server,
) -> Result<(), Failure> {
    let mut line = Vec::new();
    loop {
        let response = match read_line(input, server.max_request_bytes(), &mut line) {
            Err(e) => return Err(Failure::Read(e)),
            Ok(Line::End) => return Ok(()),
            Ok(Line::TooLarge(len)) => Some(server.too_large(len)),
            Ok(Line::Text) => answer(server, &line),
        };
        // A long-running server returns to its size between requests: the buffer of a large
        // request line is freed rather than kept for the next one.
        release(&mut line);
        if let Some(response) = response {
            output
                .write_all(response.as_bytes())
                .and_then(|()| output.write_all(b"\n"))
                .and_then(|()| output.flush())
                .map_err(Failure::Write)?;
        }
    }
}

/// Request lines at least this long run on a thread of their own (see [`answer`]).
const OWN_THREAD_BYTES: usize = 1024 * 1024;

/// The stack of such a thread: the size of a main thread's stack on Linux, which the engine's
/// recursion limits are set against.
const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Answers one line. A large request runs on a thread of its own that ends with it, so that
/// the process returns to near its size before the request: the C allocator keeps a cache of
/// freed blocks per thread, and blocks cached by a thread that lives on keep the heap from
/// shrinking, so a 50,000-object `diff` used to leave the server at 430 MB (its peak was
/// 450 MB) where it had started at 4 MB. When the request's thread ends, its cache goes back
/// to the heap, which then shrinks. Small requests, where a thread would cost more than it
/// saves, run here.
fn answer(server: &mut Server, line: &[u8]) -> Option<String> {
    if line.len() < OWN_THREAD_BYTES {
        return server.handle_line(line);
    }
    let answered = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("serve-request".into())
            .stack_size(THREAD_STACK_BYTES)
            .spawn_scoped(scope, || server.handle_line(line))
            .ok()?;
        Some(thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    // No thread to be had: answer here, at the cost of the memory.
    answered.unwrap_or_else(|| server.handle_line(line))
}

/// The line buffer kept between requests: at most [`KEPT_LINE_BYTES`] of capacity.
const KEPT_LINE_BYTES: usize = 64 * 1024;

fn release(line: &mut Vec<u8>) {
    line.clear();
    line.shrink_to(KEPT_LINE_BYTES);
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line, now in the buffer (without its `\n`).
    Text,
    /// A line longer than the limit, discarded; its length without `\n` and a final `\r`.
    TooLarge(u64),
    /// The end of input.
    End,
}

/// Reads one line into `buf`, keeping at most `limit + 1` bytes (room for a `\r` that the
/// server strips); a longer line is read to its end and discarded. The last line may lack
/// its `\n`.
pub fn read_line(input: &mut impl BufRead, limit: u64, buf: &mut Vec<u8>) -> io::Result<Line> {
    buf.clear();
    let keep = limit.saturating_add(1);
    let mut len: u64 = 0;
    let mut last = None;
    let mut started = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if !started {
                return Ok(Line::End);
            }
            break;
        }
        started = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        if let Some(&b) = part.last() {
            last = Some(b);
        }
        let room = keep.saturating_sub(len);
        let take = part.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        buf.extend_from_slice(&part[..take]);
        len = len.saturating_add(part.len() as u64);
        let used = newline.map_or(chunk.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    if len > keep || (len == keep && last != Some(b'\r')) {
        buf.clear();
        let len = if last == Some(b'\r') { len - 1 } else { len };
        return Ok(Line::TooLarge(len));
    }
    Ok(Line::Text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_large_line_buffer_is_not_kept() {
        let mut line = vec![b'x'; 1 << 20];
        super::release(&mut line);
        assert!(
            line.is_empty() && line.capacity() <= super::KEPT_LINE_BYTES,
            "{}",
            line.capacity()
        );
        let mut small = Vec::with_capacity(100);
        super::release(&mut small);
        assert_eq!(small.capacity(), 100);
    }

    #[test]
    fn large_requests_are_answered_on_their_own_thread_the_same() {
        let mut server = gitops_core::protocol::Server::new();
        let pad = " ".repeat(super::OWN_THREAD_BYTES);
        let line = format!(r#"{{"id":1,"method":"hello"{pad}}}"#);
        let big = super::answer(&mut server, line.as_bytes()).unwrap();
        let small = super::answer(&mut server, br#"{"id":1,"method":"hello"}"#).unwrap();
        assert_eq!(big, small);
    }

    use std::io::{BufReader, Cursor};

    use super::*;

    fn lines(input: &[u8], limit: u64, capacity: usize) -> Vec<Result<String, u64>> {
        let mut reader = BufReader::with_capacity(capacity, Cursor::new(input.to_vec()));
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, limit, &mut buf).unwrap() {
                Line::End => return out,
                Line::Text => out.push(Ok(String::from_utf8(buf.clone()).unwrap())),
                Line::TooLarge(n) => out.push(Err(n)),
            }
        }
    }

    #[test]
    fn bounded_lines() {
        for capacity in [1, 2, 3, 7, 64] {
            assert_eq!(
                lines(b"abc\n\nabcdef\nabcd\r\nabcde\r\nxy", 4, capacity),
                [
                    Ok("abc".to_string()),
                    Ok(String::new()),
                    Err(6),
                    Ok("abcd\r".to_string()),
                    Err(5),
                    Ok("xy".to_string()),
                ],
                "capacity {capacity}"
            );
            assert_eq!(lines(b"", 4, capacity), []);
            assert_eq!(lines(b"\n", 4, capacity), [Ok(String::new())]);
            assert_eq!(lines(b"abcde", 4, capacity), [Err(5)]);
            assert_eq!(lines(b"abcd\r", 4, capacity), [Ok("abcd\r".to_string())]);
        }
    }

    #[test]
    fn a_huge_line_is_not_kept() {
        let mut input = vec![b'x'; 1 << 20];
        input.extend_from_slice(b"\n{}\n");
        let mut reader = BufReader::with_capacity(4096, Cursor::new(input));
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut reader, 100, &mut buf).unwrap(), Line::TooLarge(1 << 20));
        assert!(buf.capacity() < 8192, "kept {} bytes", buf.capacity());
        assert_eq!(read_line(&mut reader, 100, &mut buf).unwrap(), Line::Text);
        assert_eq!(buf, b"{}");
        assert_eq!(read_line(&mut reader, 100, &mut buf).unwrap(), Line::End);
    }

    #[test]
    fn serve_answers_in_order_and_carries_on() {
        let input = b"{\"id\":1,\"method\":\"configure\",\"params\":{\"limits\":{\"maxRequestBytes\":40}}}\n\
            oops\n\n{\"id\":2,\"method\":\"nope\"}\n{\"id\":3,\"method\":\"configure\",\"params\":{\"x\":\"yyyyyyyyyyyyyyyyyyyyyy\"}}\n{\"id\":4}";
        let mut out = Vec::new();
        let mut server = Server::new();
        serve(&mut Cursor::new(&input[..]), &mut out, &mut server).unwrap();
        let out = String::from_utf8(out).unwrap();
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(got.len(), 5, "{out}");
        let first: serde_json::Value = serde_json::from_str(got[0]).unwrap();
        assert_eq!(first["id"], 1);
        assert_eq!(first["result"]["maxRequestBytes"], 40);
        assert_eq!(
            got[1],
            r#"{"id":null,"error":{"code":"parse_error","message":"parse error: expected value at line 1 column 1","object":null,"path":null}}"#
        );
        assert_eq!(
            got[2],
            r#"{"id":2,"error":{"code":"unknown_method","message":"unknown method `nope`: expected one of diff, health, plan, step, decide, configure","object":null,"path":null}}"#
        );
        assert_eq!(
            got[3],
            r#"{"id":null,"error":{"code":"request_too_large","message":"request too large: 69 bytes, the limit is 40","object":null,"path":null}}"#
        );
        assert_eq!(
            got[4],
            r#"{"id":4,"error":{"code":"invalid_request","message":"invalid request: missing field `method`","object":null,"path":null}}"#
        );
        assert!(out.ends_with('\n'));
    }
}
