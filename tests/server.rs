//! `bankwise server` end to end, as an editor drives it: a scripted LSP client on its stdin
//! and stdout opens a file, reads the diagnostics, asks for the code action, applies it and
//! gets what `bankwise fix` writes; hovers over the access; shuts the server down.
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bankwise"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        Client {
            child,
            input,
            output,
        }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("written");
        self.input.flush().expect("flushed");
    }

    fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.output.read_line(&mut line).expect("a header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length: ") {
                length = value.parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        self.output.read_exact(&mut body).expect("the body");
        serde_json::from_slice(&body).expect("JSON")
    }

    /// Sends request `id` and returns its result.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive();
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next diagnostics the server publishes.
    fn diagnostics(&mut self) -> Value {
        loop {
            let message = self.receive();
            if message["method"] == "textDocument/publishDiagnostics" {
                return message["params"].clone();
            }
        }
    }
}

/// `text` with the LSP `edits` applied (ASCII text: a UTF-16 column is a byte column).
fn apply(text: &str, edits: &[Value]) -> String {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |position: &Value| {
        let line = position["line"].as_u64().expect("a line") as usize;
        let character = position["character"].as_u64().expect("a column") as usize;
        starts[line] + character
    };
    let mut ranges: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().expect("text"),
            )
        })
        .collect();
    ranges.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut out = text.to_string();
    for (start, end, new) in ranges {
        out.replace_range(start..end, new);
    }
    out
}

#[test]
fn an_editor_gets_diagnostics_applies_the_fix_and_hovers() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("transpose.cu");
    let text = std::fs::read_to_string("testdata/transpose.cu").expect("the example");
    std::fs::write(&path, &text).expect("written");
    let uri = format!("file://{}", path.display());
    let mut client = Client::start();
    let init = client.request(1, "initialize", json!({"capabilities": {}}));
    assert_eq!(init["capabilities"]["codeActionProvider"], json!(true));
    assert_eq!(init["capabilities"]["hoverProvider"], json!(true));
    client.notify("initialized", json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "cuda", "version": 1, "text": text}}),
    );
    let published = client.diagnostics();
    assert_eq!(published["uri"], json!(uri));
    let diagnostics = published["diagnostics"].as_array().expect("a list");
    let conflict = diagnostics
        .iter()
        .find(|d| d["code"] == "BW001")
        .unwrap_or_else(|| panic!("{published}"));
    assert_eq!(conflict["source"], "bankwise");
    assert!(conflict["message"]
        .as_str()
        .expect("a message")
        .starts_with("32-way bank conflict reading `tile`"));
    // The range is the access on line 38 (0-based 37).
    assert_eq!(conflict["range"]["start"]["line"], json!(37));
    let actions = client.request(
        2,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": conflict["range"],
               "context": {"diagnostics": [conflict]}}),
    );
    let actions = actions.as_array().expect("a list");
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(actions[0]["isPreferred"], json!(true));
    let edits = actions[0]["edit"]["changes"][&uri]
        .as_array()
        .expect("edits")
        .clone();
    let fixed = apply(&text, &edits);
    let expected = Command::new(env!("CARGO_BIN_EXE_bankwise"))
        .args(["fix", "testdata/transpose.cu"])
        .output()
        .expect("bankwise fix runs");
    assert_eq!(fixed, String::from_utf8_lossy(&expected.stdout));
    let hover = client.request(
        3,
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": conflict["range"]["start"]}),
    );
    let shown = hover["contents"]["value"].as_str().expect("markdown");
    assert!(
        shown.starts_with("32-way bank conflict reading `tile`"),
        "{shown}"
    );
    // Then the banks as `bankwise explain` draws them.
    assert!(
        shown.contains("```text\n") && shown.contains("index: 32*tx + ty + j (stride 32)"),
        "{shown}"
    );
    // The fixed text, saved: no conflict is left.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    let after = client.diagnostics();
    assert!(
        !after["diagnostics"]
            .as_array()
            .expect("a list")
            .iter()
            .any(|d| d["code"] == "BW001"),
        "{after}"
    );
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(client.diagnostics()["diagnostics"], json!([]));
    client.request(4, "shutdown", Value::Null);
    client.notify("exit", Value::Null);
    let status = client.child.wait().expect("the server exits");
    assert!(status.success());
}
