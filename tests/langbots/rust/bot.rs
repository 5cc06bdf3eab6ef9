// A Kamisado Arena bot in Rust (rustc -O bot.rs), written from protocol.md,
// with the standard library only: it answers each request and plays a random
// legal action.
use std::io::{self, BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

// The arena writes compact JSON with `type` first (protocol.md §1); the fields
// read here hold no escapes, so a scan for them is enough.
fn text<'a>(line: &'a str, key: &str) -> &'a str {
    let mark = format!("\"{}\":\"", key);
    match line.find(&mark) {
        Some(at) => {
            let rest = &line[at + mark.len()..];
            &rest[..rest.find('"').unwrap_or(0)]
        }
        None => "",
    }
}

fn id(line: &str) -> &str {
    let at = line.find("\"id\":").map(|i| i + 5).unwrap_or(0);
    let rest = &line[at..];
    &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())]
}

fn main() {
    let mut state = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(_) => break,
        };
        let reply = match text(&line, "type") {
            "hello" => format!(
                "{{\"type\":\"identity\",\"id\":{},\"protocol\":1,\"name\":\"langbot-rust\",\
                 \"author\":\"tests\",\"version\":\"1\",\"games\":[\"kamisado\"]}}",
                id(&line)
            ),
            "newgame" => format!("{{\"type\":\"ready\",\"id\":{}}}", id(&line)),
            "ping" => format!("{{\"type\":\"pong\",\"id\":{}}}", id(&line)),
            "go" => {
                let from = line.find("\"legal\":[").unwrap() + 9;
                let inside = &line[from..from + line[from..].find(']').unwrap()];
                let legal: Vec<&str> = inside.split(',').collect();
                let pick = legal[(next() % legal.len() as u64) as usize];
                format!("{{\"type\":\"action\",\"id\":{},\"action\":{}}}", id(&line), pick)
            }
            "quit" => return,
            _ => continue,
        };
        writeln!(out, "{}", reply).unwrap();
        out.flush().unwrap();
    }
}
