//! `bankwise server`: a Language Server on stdin and stdout, as `ruff server` and clangd are.
//! It keeps each open buffer's text, analyses it on open, change and save as `check` does
//! (the same findings, selections and `NOLINT` comments), publishes the findings as
//! diagnostics, offers each array's fix as a code action (its edits, as `fix` would make
//! them), and on hover over an access shows its conflict as `explain` draws it.
use super::AnalysisArgs;
use bankwise::explain::{explain_text, Query};
use bankwise::parse::Severity;
use bankwise::pipeline::{self, FixOptions};
use bankwise::report::finding::{attach_fixes, shown_findings, Finding, Shown};
use bankwise::rewrite::edit::Applicability;
use bankwise::settings::Settings;
use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics,
};
use lsp_types::request::{CodeActionRequest, HoverRequest, Request as _};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, Diagnostic, DiagnosticSeverity, HoverContents, HoverParams,
    HoverProviderCapability, MarkupContent, MarkupKind, NumberOrString, Position,
    PublishDiagnosticsParams, Range, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Url, WorkspaceEdit,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ServerArgs {
    #[command(flatten)]
    analysis: AnalysisArgs,
}

/// An open buffer: its text and its findings as the last analysis left them.
struct Document {
    text: String,
    findings: Vec<Finding>,
}

pub fn run(args: ServerArgs) -> ExitCode {
    let options = match args.analysis.options(Settings::default()) {
        Ok(options) => options,
        Err(message) => {
            bankwise::say!("bankwise: error: {message}");
            return ExitCode::from(super::EXIT_INPUT_ERROR);
        }
    };
    match serve(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            bankwise::say!("bankwise: error: server: {message}");
            ExitCode::from(super::EXIT_INPUT_ERROR)
        }
    }
}

fn serve(options: &bankwise::analysis::Options) -> Result<(), String> {
    let (connection, threads) = Connection::stdio();
    let capabilities = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    };
    let capabilities = serde_json::to_value(capabilities).map_err(|e| e.to_string())?;
    connection
        .initialize(capabilities)
        .map_err(|e| e.to_string())?;
    let mut documents: HashMap<Url, Document> = HashMap::new();
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection
                    .handle_shutdown(&request)
                    .map_err(|e| e.to_string())?
                {
                    break;
                }
                let response = respond(&request, &documents, options);
                send(&connection, Message::Response(response))?;
            }
            Message::Notification(notification) => {
                if let Some(uri) = update(&notification, &mut documents, options) {
                    let diagnostics = documents
                        .get(&uri)
                        .map(|d| diagnostics(&d.findings, &d.text))
                        .unwrap_or_default();
                    let params = PublishDiagnosticsParams {
                        uri,
                        diagnostics,
                        version: None,
                    };
                    let notification = Notification::new(PublishDiagnostics::METHOD.into(), params);
                    send(&connection, Message::Notification(notification))?;
                }
            }
            Message::Response(_) => {}
        }
    }
    drop(connection);
    threads.join().map_err(|e| e.to_string())
}

fn send(connection: &Connection, message: Message) -> Result<(), String> {
    connection.sender.send(message).map_err(|e| e.to_string())
}

/// Applies a notification to the open buffers; the document whose diagnostics changed.
fn update(
    notification: &Notification,
    documents: &mut HashMap<Url, Document>,
    options: &bankwise::analysis::Options,
) -> Option<Url> {
    let params = notification.params.clone();
    let (uri, text) = match notification.method.as_str() {
        DidOpenTextDocument::METHOD => {
            let p: lsp_types::DidOpenTextDocumentParams = serde_json::from_value(params).ok()?;
            (p.text_document.uri, p.text_document.text)
        }
        DidChangeTextDocument::METHOD => {
            let p: lsp_types::DidChangeTextDocumentParams = serde_json::from_value(params).ok()?;
            // Full sync: the last change is the whole text.
            let text = p.content_changes.into_iter().last()?.text;
            (p.text_document.uri, text)
        }
        DidSaveTextDocument::METHOD => {
            let p: lsp_types::DidSaveTextDocumentParams = serde_json::from_value(params).ok()?;
            let text = match p.text {
                Some(text) => text,
                None => documents.get(&p.text_document.uri)?.text.clone(),
            };
            (p.text_document.uri, text)
        }
        DidCloseTextDocument::METHOD => {
            let p: lsp_types::DidCloseTextDocumentParams = serde_json::from_value(params).ok()?;
            documents.remove(&p.text_document.uri);
            // An empty list clears what the editor shows.
            return Some(p.text_document.uri);
        }
        _ => return None,
    };
    let findings = analyse(&uri, &text, options);
    documents.insert(uri.clone(), Document { text, findings });
    Some(uri)
}

/// The path a document is analysed as: its file, for `bankwise.toml` and headers beside it.
fn path_of(uri: &Url) -> PathBuf {
    uri.to_file_path()
        .unwrap_or_else(|()| PathBuf::from(uri.path()))
}

/// The findings `check` shows for `text`, each conflict with its array's fix.
fn analyse(uri: &Url, text: &str, options: &bankwise::analysis::Options) -> Vec<Finding> {
    let shown = Shown::default();
    let checked = match pipeline::check_text(&path_of(uri), text.to_string(), options, true) {
        Ok(checked) => checked,
        Err(_) => return Vec::new(),
    };
    let mut findings = shown_findings(&checked.analysed, &shown);
    if let Some(Ok(fix)) = &checked.fix {
        attach_fixes(&mut findings, &checked.analysed, fix);
    }
    findings
}

fn respond(
    request: &Request,
    documents: &HashMap<Url, Document>,
    options: &bankwise::analysis::Options,
) -> Response {
    let id = request.id.clone();
    let params = request.params.clone();
    match request.method.as_str() {
        CodeActionRequest::METHOD => match serde_json::from_value::<CodeActionParams>(params) {
            Ok(p) => {
                let actions = documents
                    .get(&p.text_document.uri)
                    .map(|d| code_actions(&p.text_document.uri, d, p.range))
                    .unwrap_or_default();
                Response::new_ok(id, actions)
            }
            Err(err) => invalid(id, err),
        },
        HoverRequest::METHOD => match serde_json::from_value::<HoverParams>(params) {
            Ok(p) => {
                let uri = p.text_document_position_params.text_document.uri;
                let at = p.text_document_position_params.position;
                let hover = documents
                    .get(&uri)
                    .and_then(|d| hover(&uri, d, at, options));
                Response::new_ok(id, hover)
            }
            Err(err) => invalid(id, err),
        },
        _ => Response::new_err(
            id,
            lsp_server::ErrorCode::MethodNotFound as i32,
            format!("bankwise server does not answer {}", request.method),
        ),
    }
}

fn invalid(id: lsp_server::RequestId, err: serde_json::Error) -> Response {
    Response::new_err(
        id,
        lsp_server::ErrorCode::InvalidParams as i32,
        err.to_string(),
    )
}

/// The findings as the editor shows them: the access's range for a conflict, else the
/// finding's place to the end of its line.
fn diagnostics(findings: &[Finding], text: &str) -> Vec<Diagnostic> {
    let lines = Lines::new(text);
    findings
        .iter()
        .filter_map(|finding| {
            let rule = finding.rule?;
            Some(Diagnostic {
                range: range_of(finding, &lines),
                severity: Some(match finding.severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                    Severity::Note => DiagnosticSeverity::INFORMATION,
                }),
                code: Some(NumberOrString::String(rule.id().to_string())),
                source: Some("bankwise".to_string()),
                message: finding.message.clone(),
                ..Diagnostic::default()
            })
        })
        .collect()
}

fn range_of(finding: &Finding, lines: &Lines) -> Range {
    match &finding.conflict {
        Some(conflict) => Range {
            start: lines.position(conflict.span.start),
            end: lines.position(conflict.span.end),
        },
        None => {
            let start = lines.position_of(finding.at.line, finding.at.col);
            Range {
                start,
                end: lines.line_end(finding.at.line),
            }
        }
    }
}

/// One code action per array whose fix a finding in `range` carries: its edits, as
/// `bankwise fix` would make them (safe fixes only: the preferred quick fix).
fn code_actions(uri: &Url, document: &Document, range: Range) -> Vec<CodeActionOrCommand> {
    let lines = Lines::new(&document.text);
    let all = diagnostics(&document.findings, &document.text);
    document
        .findings
        .iter()
        .filter(|f| f.rule.is_some())
        .zip(all)
        .filter_map(|(finding, diagnostic)| {
            let fix = finding.conflict.as_ref()?.fix.as_ref()?;
            let overlaps =
                diagnostic.range.start <= range.end && range.start <= diagnostic.range.end;
            if !overlaps {
                return None;
            }
            let edits = fix
                .edits
                .iter()
                .map(|edit| TextEdit {
                    range: Range {
                        start: lines.position(edit.range.start),
                        end: lines.position(edit.range.end),
                    },
                    new_text: edit.replacement.clone(),
                })
                .collect();
            let safe = fix.applicability == Applicability::Safe;
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title: if safe {
                    format!("bankwise: {}", fix.description)
                } else {
                    format!("bankwise (unsafe): {}", fix.description)
                },
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(safe),
                ..CodeAction::default()
            }))
        })
        .collect()
}

/// On an access with a conflict: its message, then the banks before and after the fix's
/// map as `bankwise explain` draws them.
fn hover(
    uri: &Url,
    document: &Document,
    at: Position,
    options: &bankwise::analysis::Options,
) -> Option<lsp_types::Hover> {
    let lines = Lines::new(&document.text);
    let finding = document.findings.iter().find(|f| {
        f.conflict
            .as_ref()
            .is_some_and(|c| lines.position(c.span.start) <= at && at <= lines.position(c.span.end))
    })?;
    let fix_options = FixOptions {
        analysis: options.clone(),
        ..FixOptions::default()
    };
    let query = Query {
        line: finding.at.line,
        col: Some(finding.at.col),
        warp: None,
        iteration: Vec::new(),
    };
    let path = path_of(uri);
    let blocks = bankwise::settings::Config::for_input(&path, options.config_file.as_deref())
        .map(|config| config.blocks)
        .unwrap_or_default();
    let drawn = explain_text(&path, &document.text, &fix_options, &blocks, &query)
        .map(|e| e.text())
        .unwrap_or_default();
    Some(lsp_types::Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: format!("{}\n\n```text\n{drawn}```", finding.message),
        }),
        range: Some(range_of(finding, &lines)),
    })
}

/// Byte offsets and 1-based byte columns as LSP positions (0-based lines, UTF-16 columns).
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    fn position(&self, offset: usize) -> Position {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts[line];
        let column = self.text[start..offset].encode_utf16().count();
        Position::new(
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }

    /// The position of 1-based `line` and byte column `col`.
    fn position_of(&self, line: usize, col: usize) -> Position {
        match self.starts.get(line.saturating_sub(1)) {
            Some(&start) => self.position(start + col.saturating_sub(1)),
            None => self.position(self.text.len()),
        }
    }

    fn line_end(&self, line: usize) -> Position {
        let end = self
            .starts
            .get(line)
            .map_or(self.text.len(), |&next| next.saturating_sub(1));
        self.position(end)
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
