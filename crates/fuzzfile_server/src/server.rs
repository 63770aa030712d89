//! The server's state and its message dispatch. No I/O: messages in, messages out.

use crate::diagnostics;
use crate::document::{self, Document};
use crate::position::{Encoding, Lines};
use crate::settings::{ClientSettings, Settings};
use fuzzfile_check::Analysis;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response, ResponseError};
use lsp_types::{
    ClientCapabilities, CodeActionKind, CodeActionOptions, CodeActionProviderCapability,
    CompletionOptions, DiagnosticOptions, DiagnosticServerCapabilities,
    FoldingRangeProviderCapability, HoverProviderCapability, InitializeParams, InitializeResult,
    OneOf, PositionEncodingKind, RenameOptions, SaveOptions, SelectionRangeProviderCapability,
    ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri, WorkDoneProgressOptions,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

/// What the driver knows of messages not handled yet, so that a flush skips stale work
/// (`crate::inbox` over a connection; nothing in the fuzz driver and the tests that call
/// [`Server::flush`]).
pub trait Interruptions {
    /// A message is waiting to be handled.
    fn message_waiting(&mut self) -> bool;
    /// A `didChange` or `didClose` of the document `uri` is waiting to be handled.
    fn document_changed(&mut self, uri: &str) -> bool;
}

/// Nothing ever waits.
pub struct NoInterruptions;

impl Interruptions for NoInterruptions {
    fn message_waiting(&mut self) -> bool {
        false
    }
    fn document_changed(&mut self, _uri: &str) -> bool {
        false
    }
}

/// What became of one pending document in a flush.
enum Published {
    /// Published, or nothing to publish.
    Yes,
    /// Analysed, but a change to it is waiting: left pending.
    Superseded,
}

/// What the driver does after a message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Control {
    Continue,
    /// `exit` arrived: stop with this process status.
    Exit(i32),
}

/// One open document's analysis, with what every feature needs to answer about it.
pub struct View<'a> {
    pub uri: &'a Uri,
    pub version: i32,
    pub analysis: &'a Analysis,
    pub lines: Lines<'a>,
}

impl View<'_> {
    pub fn text(&self) -> &str {
        &self.analysis.text
    }
}

pub struct Server {
    encoding: Encoding,
    caps: ClientCapabilities,
    docs: HashMap<String, Document>,
    settings: Settings,
    /// Documents whose diagnostics are to be (re)published, by URI, in the order they first
    /// changed since the last publication.
    pending: Vec<String>,
    /// Messages produced outside a reply (notifications, requests to the client).
    outbox: Vec<Message>,
    shutdown: bool,
    /// Settings errors already shown, so one bad file is reported once.
    shown_errors: BTreeSet<String>,
    /// Id of our `workspace/configuration` request in flight.
    config_request: Option<RequestId>,
    next_request: i32,
    /// Counts analysis uses, to find the least recently used one.
    clock: u64,
    /// Evaluations of the documents' shell texts, kept between edits: an edit re-evaluates
    /// only the jobs whose shell it touched (bounded; see `EvaluationCache`).
    evaluations: fuzzfile_check::semantics::EvaluationCache,
    /// The checks of open application templates, by URI (`crate::template`).
    templates: HashMap<String, crate::template::Entry>,
}

/// How many documents keep their analysis between requests. An analysis takes about 30
/// bytes per byte of text (a 5,000-line file: about 4 MB), so keeping one for every open
/// document would make memory grow with the number of open files; the documents being
/// edited are the recently used ones, and any other is analysed again in milliseconds when
/// a request needs it.
pub const CACHED_ANALYSES: usize = 16;

fn supports_utf8(caps: &ClientCapabilities) -> bool {
    caps.general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
        .is_some_and(|e| e.contains(&PositionEncodingKind::UTF8))
}

impl Server {
    /// Negotiate with the client's `initialize` parameters; returns the server and the
    /// `InitializeResult` to send. Parameters that do not parse are treated as an empty
    /// request (UTF-16, no workspace, default settings).
    pub fn initialize(params: Value) -> (Server, Value) {
        let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
        let caps = params.capabilities.clone();
        let encoding = if supports_utf8(&caps) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        #[allow(deprecated)] // `root_uri` is what older clients send
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .and_then(|f| document::file_path(f.uri.as_str()))
            .or_else(|| {
                params
                    .root_uri
                    .as_ref()
                    .and_then(|u| document::file_path(u.as_str()))
            });
        let mut server = Server {
            encoding,
            caps,
            docs: HashMap::new(),
            settings: Settings::new(root),
            pending: Vec::new(),
            outbox: Vec::new(),
            shutdown: false,
            shown_errors: BTreeSet::new(),
            config_request: None,
            next_request: 0,
            clock: 0,
            evaluations: fuzzfile_check::semantics::EvaluationCache::default(),
            templates: HashMap::new(),
        };
        if let Some(opts) = &params.initialization_options {
            server.apply_client_settings(opts);
        }
        let result = InitializeResult {
            capabilities: server.capabilities(),
            server_info: Some(ServerInfo {
                name: "fuzzlint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        };
        (server, serde_json::to_value(result).unwrap_or(Value::Null))
    }

    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            position_encoding: Some(match self.encoding {
                Encoding::Utf8 => PositionEncodingKind::UTF8,
                Encoding::Utf16 => PositionEncodingKind::UTF16,
            }),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    will_save: None,
                    will_save_wait_until: None,
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                        include_text: Some(false),
                    })),
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            completion_provider: Some(CompletionOptions {
                // `.`: value names in a template's `{{ .` (a Fuzzfile answers nothing to it).
                trigger_characters: Some(
                    ["$", "{", "/", ":", "-", "_", "."]
                        .map(String::from)
                        .to_vec(),
                ),
                ..Default::default()
            }),
            definition_provider: Some(OneOf::Left(true)),
            references_provider: Some(OneOf::Left(true)),
            rename_provider: Some(OneOf::Right(RenameOptions {
                prepare_provider: Some(true),
                work_done_progress_options: WorkDoneProgressOptions::default(),
            })),
            document_symbol_provider: Some(OneOf::Left(true)),
            folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
            selection_range_provider: Some(SelectionRangeProviderCapability::Simple(true)),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![
                    CodeActionKind::QUICKFIX,
                    CodeActionKind::new(crate::actions::FIX_ALL_KIND),
                ]),
                work_done_progress_options: WorkDoneProgressOptions::default(),
                resolve_provider: Some(false),
            })),
            inlay_hint_provider: Some(OneOf::Left(true)),
            diagnostic_provider: Some(DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some(diagnostics::SOURCE.into()),
                inter_file_dependencies: false,
                workspace_diagnostics: false,
                work_done_progress_options: WorkDoneProgressOptions::default(),
            })),
            semantic_tokens_provider: Some(crate::semantic::capability()),
            ..Default::default()
        }
    }

    /// The client pulls diagnostics (`textDocument/diagnostic`) itself.
    fn client_pulls(&self) -> bool {
        self.caps
            .text_document
            .as_ref()
            .and_then(|t| t.diagnostic.as_ref())
            .is_some()
    }

    /// Push diagnostics unless the client pulls them (then pushing would show them twice),
    /// or when the settings ask for it.
    fn pushes(&self) -> bool {
        self.settings
            .client
            .push_diagnostics
            .unwrap_or(!self.client_pulls())
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Called once `initialized` arrived: watch config files where the client can.
    pub fn initialized(&mut self, out: &mut Vec<Message>) {
        let dynamic_watch = self
            .caps
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        if dynamic_watch {
            let params = serde_json::json!({"registrations": [{
                "id": "fuzzlint-config-watch",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {"watchers": [
                    {"globPattern": "**/*.toml"},
                    // Values files of application templates (`crate::template`).
                    {"globPattern": "**/*values.{yaml,yml}"}
                ]}
            }]});
            let id = self.request_id();
            out.push(Request::new(id, "client/registerCapability".into(), params).into());
        }
        self.request_configuration();
        out.append(&mut self.outbox);
    }

    fn request_id(&mut self) -> RequestId {
        self.next_request += 1;
        RequestId::from(format!("fuzzlint-{}", self.next_request))
    }

    /// Ask for the `fuzzlint` settings section, where the client supports it.
    fn request_configuration(&mut self) {
        let supports = self
            .caps
            .workspace
            .as_ref()
            .and_then(|w| w.configuration)
            .unwrap_or(false);
        if !supports {
            return;
        }
        let id = self.request_id();
        self.config_request = Some(id.clone());
        let params = serde_json::json!({"items": [{"section": "fuzzlint"}]});
        self.outbox
            .push(Request::new(id, "workspace/configuration".into(), params).into());
    }

    /// Queue a document's diagnostics for the next publication.
    fn mark(&mut self, key: String) {
        if !self.pending.contains(&key) {
            self.pending.push(key);
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    pub fn debounce(&self) -> Duration {
        self.settings.client.debounce()
    }

    /// Handle one message; replies and notifications are appended to `out`.
    pub fn handle(&mut self, msg: Message, out: &mut Vec<Message>) -> Control {
        let control = match msg {
            Message::Request(req) => {
                let id = req.id.clone();
                let method = req.method.clone();
                let reply = std::panic::catch_unwind(AssertUnwindSafe(|| self.on_request(req)));
                let response = match reply {
                    Ok(r) => r,
                    Err(_) => Response {
                        id,
                        response_result: Err(ResponseError {
                            code: ErrorCode::InternalError as i32,
                            message: format!("fuzzlint server: internal error in {method}"),
                            data: None,
                        }),
                    },
                };
                out.push(response.into());
                Control::Continue
            }
            Message::Notification(n) => {
                let method = n.method.clone();
                match std::panic::catch_unwind(AssertUnwindSafe(|| self.on_notification(n))) {
                    Ok(c) => c,
                    Err(_) => {
                        self.log(
                            lsp_types::MessageType::ERROR,
                            format!("internal error while handling {method}"),
                        );
                        Control::Continue
                    }
                }
            }
            Message::Response(r) => {
                self.on_response(r);
                Control::Continue
            }
        };
        out.append(&mut self.outbox);
        control
    }

    fn log(&mut self, typ: lsp_types::MessageType, message: String) {
        let params = lsp_types::LogMessageParams { typ, message };
        self.outbox
            .push(Notification::new("window/logMessage".into(), params).into());
    }

    fn show_error_once(&mut self, message: String) {
        if self.shown_errors.insert(message.clone()) {
            let params = lsp_types::ShowMessageParams {
                typ: lsp_types::MessageType::ERROR,
                message: format!("fuzzlint: {message}"),
            };
            self.outbox
                .push(Notification::new("window/showMessage".into(), params).into());
        }
    }

    fn on_response(&mut self, r: Response) {
        if self.config_request.as_ref() == Some(&r.id) {
            self.config_request = None;
            if let Ok(Value::Array(items)) = r.response_result {
                if let Some(first) = items.into_iter().next() {
                    if !first.is_null() {
                        self.apply_client_settings(&first);
                        self.settings_changed();
                    }
                }
            }
        }
    }

    fn apply_client_settings(&mut self, v: &Value) {
        let (client, warnings) = ClientSettings::from_json(v);
        for w in warnings {
            self.log(lsp_types::MessageType::WARNING, w);
        }
        if client != self.settings.client {
            self.settings.set_client(client);
        }
    }

    /// Settings (or a config file) changed: every analysis is stale.
    fn settings_changed(&mut self) {
        self.settings.invalidate();
        self.shown_errors.clear();
        let mut keys: Vec<String> = self.docs.keys().cloned().collect();
        keys.sort();
        for k in keys {
            self.mark(k);
        }
        self.request_diagnostic_refresh();
    }

    /// Ask a client that pulls diagnostics to pull them again (where it supports that).
    fn request_diagnostic_refresh(&mut self) {
        let refresh = self
            .caps
            .workspace
            .as_ref()
            .and_then(|w| w.diagnostic.as_ref())
            .and_then(|d| d.refresh_support)
            .unwrap_or(false);
        if refresh && self.client_pulls() {
            let id = self.request_id();
            self.outbox
                .push(Request::new(id, "workspace/diagnostic/refresh".into(), Value::Null).into());
        }
    }

    fn on_notification(&mut self, n: Notification) -> Control {
        match n.method.as_str() {
            "exit" => return Control::Exit(if self.shutdown { 0 } else { 1 }),
            "textDocument/didOpen" => {
                if let Ok(p) = parse::<lsp_types::DidOpenTextDocumentParams>(n.params) {
                    let d = p.text_document;
                    let key = d.uri.as_str().to_owned();
                    let doc = Document::new(d.uri, &d.language_id, d.version, d.text);
                    self.docs.insert(key.clone(), doc);
                    self.mark(key.clone());
                    self.mark_template_neighbours(&key);
                }
            }
            "textDocument/didChange" => {
                if let Ok(p) = parse::<lsp_types::DidChangeTextDocumentParams>(n.params) {
                    let key = p.text_document.uri.as_str().to_owned();
                    let encoding = self.encoding;
                    match self.docs.get_mut(&key) {
                        None => self.log(
                            lsp_types::MessageType::WARNING,
                            format!("didChange for a document that is not open: {key}"),
                        ),
                        Some(doc) if p.text_document.version < doc.version => {
                            let msg = format!(
                                "ignored a change to {key} at version {} (the document is at version {})",
                                p.text_document.version, doc.version
                            );
                            self.log(lsp_types::MessageType::WARNING, msg);
                        }
                        Some(doc) => {
                            for change in p.content_changes {
                                doc.apply(change, encoding);
                            }
                            doc.version = p.text_document.version;
                            doc.refresh_kind();
                            self.mark(key.clone());
                            self.mark_template_neighbours(&key);
                        }
                    }
                }
            }
            "textDocument/didSave" => {
                if let Ok(p) = parse::<lsp_types::DidSaveTextDocumentParams>(n.params) {
                    let key = p.text_document.uri.as_str().to_owned();
                    if is_settings_file(&key) {
                        self.settings_changed();
                    } else if self.docs.contains_key(&key) {
                        self.mark(key.clone());
                        self.mark_template_neighbours(&key);
                    }
                }
            }
            "textDocument/didClose" => {
                if let Ok(p) = parse::<lsp_types::DidCloseTextDocumentParams>(n.params) {
                    let key = p.text_document.uri.as_str().to_owned();
                    self.pending.retain(|k| *k != key);
                    self.templates.remove(&key);
                    if let Some(doc) = self.docs.remove(&key) {
                        if doc.published_any && self.pushes() {
                            self.publish(doc.uri, None, Vec::new());
                        }
                    }
                    // A template now reads its values file from disk; a values file has no
                    // open template any more.
                    self.mark_template_neighbours(&key);
                }
            }
            "workspace/didChangeConfiguration" => {
                if let Ok(p) = parse::<lsp_types::DidChangeConfigurationParams>(n.params) {
                    let empty = p.settings.is_null()
                        || p.settings.as_object().is_some_and(|o| o.is_empty());
                    if empty {
                        // The client wants us to pull the settings.
                        self.request_configuration();
                    } else {
                        self.apply_client_settings(&p.settings);
                    }
                    self.settings_changed();
                }
            }
            "workspace/didChangeWatchedFiles" => {
                if let Ok(p) = parse::<lsp_types::DidChangeWatchedFilesParams>(n.params) {
                    if p.changes.iter().any(|c| is_settings_file(c.uri.as_str())) {
                        self.settings_changed();
                    }
                    // A values file changed on disk: the open templates that read it (unless
                    // it is open, when the editor's text is what counts and did not change).
                    for c in &p.changes {
                        let key = c.uri.as_str();
                        if crate::template::is_values_uri(key) && !self.docs.contains_key(key) {
                            self.mark_template_neighbours(key);
                        }
                    }
                }
            }
            _ => {}
        }
        Control::Continue
    }

    fn on_request(&mut self, req: Request) -> Response {
        let id = req.id;
        if self.shutdown {
            return Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".into(),
            );
        }
        let params = req.params;
        let result: Result<Value, ResponseError> = match req.method.as_str() {
            "shutdown" => {
                self.shutdown = true;
                Ok(Value::Null)
            }
            "textDocument/diagnostic" => call(params, |p| self.pull_diagnostics(p)),
            "textDocument/hover" => call(params, |p: lsp_types::HoverParams| {
                let pos = p.text_document_position_params;
                if self.is_template(&pos.text_document.uri) {
                    return self.template_at(
                        &pos.text_document.uri,
                        pos.position,
                        crate::template::hover,
                    );
                }
                self.at(&pos.text_document.uri, pos.position, crate::hover::hover)
            }),
            "textDocument/completion" => call(params, |p: lsp_types::CompletionParams| {
                let pos = p.text_document_position;
                if self.is_template(&pos.text_document.uri) {
                    return self
                        .template_at(
                            &pos.text_document.uri,
                            pos.position,
                            crate::template::complete,
                        )
                        .map(lsp_types::CompletionResponse::Array);
                }
                let dot = p
                    .context
                    .as_ref()
                    .and_then(|c| c.trigger_character.as_deref())
                    == Some(".");
                if dot {
                    // Only templates complete after `.`; in a Fuzzfile it is a path or a
                    // version being typed.
                    return Some(lsp_types::CompletionResponse::Array(Vec::new()));
                }
                self.at(
                    &pos.text_document.uri,
                    pos.position,
                    crate::completion::complete,
                )
                .map(lsp_types::CompletionResponse::Array)
            }),
            "textDocument/definition" => call(params, |p: lsp_types::GotoDefinitionParams| {
                let pos = p.text_document_position_params;
                if self.is_template(&pos.text_document.uri) {
                    return self
                        .template_at(
                            &pos.text_document.uri,
                            pos.position,
                            crate::template::definition,
                        )
                        .map(lsp_types::GotoDefinitionResponse::Scalar);
                }
                self.at(
                    &pos.text_document.uri,
                    pos.position,
                    crate::navigation::definition,
                )
                .map(lsp_types::GotoDefinitionResponse::Scalar)
            }),
            "textDocument/references" => call(params, |p: lsp_types::ReferenceParams| {
                let pos = p.text_document_position;
                let decl = p.context.include_declaration;
                if self.is_template(&pos.text_document.uri) {
                    return self.template_at(&pos.text_document.uri, pos.position, |ctx, o| {
                        crate::template::references(ctx, o, decl)
                    });
                }
                if let Some(found) =
                    self.values_references(&pos.text_document.uri, pos.position, decl)
                {
                    return Some(found);
                }
                self.at(&pos.text_document.uri, pos.position, |v, o| {
                    crate::navigation::references(v, o, decl)
                })
            }),
            "textDocument/prepareRename" => {
                call(params, |p: lsp_types::TextDocumentPositionParams| {
                    self.at(
                        &p.text_document.uri,
                        p.position,
                        crate::navigation::prepare_rename,
                    )
                })
            }
            "textDocument/rename" => match parse::<lsp_types::RenameParams>(params) {
                Ok(p) => {
                    let pos = p.text_document_position;
                    let new_name = p.new_name;
                    match self.at(&pos.text_document.uri, pos.position, |v, o| {
                        crate::navigation::rename(v, o, &new_name)
                    }) {
                        Some(Err(message)) => Err(ResponseError {
                            code: ErrorCode::InvalidParams as i32,
                            message,
                            data: None,
                        }),
                        Some(Ok(edit)) => Ok(serde_json::to_value(edit).unwrap_or(Value::Null)),
                        None => Ok(Value::Null),
                    }
                }
                Err(e) => Err(e),
            },
            "textDocument/documentSymbol" => call(params, |p: lsp_types::DocumentSymbolParams| {
                self.whole(&p.text_document.uri, crate::outline::symbols)
                    .map(lsp_types::DocumentSymbolResponse::Nested)
            }),
            "textDocument/foldingRange" => call(params, |p: lsp_types::FoldingRangeParams| {
                self.whole(&p.text_document.uri, crate::outline::folding)
            }),
            "textDocument/selectionRange" => call(params, |p: lsp_types::SelectionRangeParams| {
                let positions = p.positions;
                self.whole(&p.text_document.uri, |v| {
                    crate::outline::selection(v, &positions)
                })
            }),
            "textDocument/codeAction" => call(params, |p: lsp_types::CodeActionParams| {
                if self.is_template(&p.text_document.uri) {
                    let uri = p.text_document.uri.clone();
                    let version = self.docs.get(uri.as_str()).map_or(0, |d| d.version);
                    return self.template_at(&uri, p.range.start, |ctx, _| {
                        Some(crate::template::code_actions(
                            ctx, &uri, version, p.range, &p.context,
                        ))
                    });
                }
                self.whole(&p.text_document.uri, |v| {
                    crate::actions::code_actions(v, p.range, &p.context)
                })
            }),
            "textDocument/inlayHint" => call(params, |p: lsp_types::InlayHintParams| {
                if self.settings.client.inlay_hints == Some(false) {
                    return Some(Vec::new());
                }
                self.whole(&p.text_document.uri, |v| crate::inlay::hints(v, p.range))
            }),
            "textDocument/semanticTokens/full" => {
                call(params, |p: lsp_types::SemanticTokensParams| {
                    self.whole(&p.text_document.uri, crate::semantic::tokens)
                })
            }
            _ => Err(ResponseError {
                code: ErrorCode::MethodNotFound as i32,
                message: format!("fuzzlint server does not handle {}", req.method),
                data: None,
            }),
        };
        Response {
            id,
            response_result: result,
        }
    }

    /// The analysis of an open document at its current version (computed now if needed).
    /// `None` for an unknown document or one the server leaves alone.
    fn analysis(&mut self, key: &str) -> Option<Arc<Analysis>> {
        let generation = self.settings.generation;
        self.clock += 1;
        let now = self.clock;
        let doc = self.docs.get_mut(key)?;
        if !doc.analysed {
            return None;
        }
        doc.last_used = now;
        if let Some((g, a)) = &doc.analysis {
            if *g == generation {
                return Some(Arc::clone(a));
            }
        }
        let path = doc.path.clone();
        let (mut options, error) = self.settings.options_for(path.as_deref());
        if let Some(e) = error {
            self.show_error_once(e);
        }
        options.evaluations = Some(self.evaluations.clone());
        let doc = self.docs.get_mut(key)?;
        options.task_findings = Some(doc.task_findings.clone());
        let a = Arc::new(fuzzfile_check::analyze_with(&doc.text, &options));
        doc.analysis = Some((generation, Arc::clone(&a)));
        self.evict();
        Some(a)
    }

    /// Keep the analyses of the [`CACHED_ANALYSES`] most recently used documents only.
    fn evict(&mut self) {
        loop {
            let cached = self.docs.values().filter(|d| d.analysis.is_some());
            if cached.count() <= CACHED_ANALYSES {
                return;
            }
            let oldest = self
                .docs
                .values_mut()
                .filter(|d| d.analysis.is_some())
                .min_by_key(|d| d.last_used);
            match oldest {
                Some(d) => d.analysis = None,
                None => return,
            }
        }
    }

    /// Run `f` on a document's view; `None` when there is nothing to answer about.
    fn whole<R>(&mut self, uri: &Uri, f: impl FnOnce(&View<'_>) -> R) -> Option<R> {
        let a = self.analysis(uri.as_str())?;
        let doc = self.docs.get(uri.as_str())?;
        let view = View {
            uri: &doc.uri,
            version: doc.version,
            analysis: &a,
            lines: Lines::new(&a.text, &a.line_index, self.encoding),
        };
        Some(f(&view))
    }

    /// Run `f` at a position of a document; `None` for a position past the last line.
    fn at<R>(
        &mut self,
        uri: &Uri,
        pos: lsp_types::Position,
        f: impl FnOnce(&View<'_>, u32) -> Option<R>,
    ) -> Option<R> {
        self.whole(uri, |v| {
            let offset = v.lines.offset_checked(pos)?;
            f(v, offset)
        })
        .flatten()
    }

    fn diagnostics_of(&mut self, key: &str) -> Option<(Uri, i32, Vec<lsp_types::Diagnostic>)> {
        match self.docs.get(key) {
            Some(d) if d.template => return self.template_diagnostics(key),
            Some(d) if d.values => return self.values_diagnostics(key),
            _ => {}
        }
        let a = self.analysis(key)?;
        let doc = self.docs.get(key)?;
        let lines = Lines::new(&a.text, &a.line_index, self.encoding);
        // `cluster-profile-missing` is a note about the whole check, not about a place in the
        // file (the command line says it once for a run): an editor does not get it on every
        // GPU file it opens.
        let items = a
            .diagnostics
            .iter()
            .filter(|d| d.rule != fuzzfile_diagnostics::Rule::ClusterProfileMissing)
            .map(|d| diagnostics::to_lsp(d, &lines, &doc.uri))
            .collect();
        Some((doc.uri.clone(), doc.version, items))
    }

    fn pull_diagnostics(
        &mut self,
        p: lsp_types::DocumentDiagnosticParams,
    ) -> lsp_types::DocumentDiagnosticReportResult {
        use lsp_types::{
            DocumentDiagnosticReport, FullDocumentDiagnosticReport,
            RelatedFullDocumentDiagnosticReport, RelatedUnchangedDocumentDiagnosticReport,
            UnchangedDocumentDiagnosticReport,
        };
        let key = p.text_document.uri.as_str().to_owned();
        let version = self.docs.get(&key).map(|d| d.version);
        let stamp = self.dependency_stamp(&key);
        let result_id = version.map(|v| format!("{}:{v}{stamp}", self.settings.generation));
        if result_id.is_some() && p.previous_result_id == result_id {
            return DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                related_documents: None,
                unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                    result_id: result_id.unwrap_or_default(),
                },
            })
            .into();
        }
        let items = self
            .diagnostics_of(&key)
            .map(|(_, _, items)| items)
            .unwrap_or_default();
        DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
        })
        .into()
    }

    fn publish(&mut self, uri: Uri, version: Option<i32>, diagnostics: Vec<lsp_types::Diagnostic>) {
        let params = lsp_types::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.outbox
            .push(Notification::new("textDocument/publishDiagnostics".into(), params).into());
    }

    /// Publish the diagnostics of every document changed since the last flush, each at its
    /// latest version (intermediate versions are never analysed).
    pub fn flush(&mut self, out: &mut Vec<Message>) {
        self.flush_with(out, &mut NoInterruptions);
    }

    /// [`Server::flush`], stopping where `interruptions` says the work would be stale: no
    /// analysis starts while a message is waiting, and a document changed while it was
    /// analysed is not published. What is left stays pending, for the next flush.
    pub fn flush_with(&mut self, out: &mut Vec<Message>, interruptions: &mut dyn Interruptions) {
        let mut pending = std::mem::take(&mut self.pending).into_iter();
        if self.pushes() {
            while let Some(key) = pending.next() {
                if interruptions.message_waiting() {
                    self.keep_pending(key, pending);
                    break;
                }
                let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    self.publish_one(&key, interruptions)
                }));
                match result {
                    Ok(Published::Yes) => {}
                    Ok(Published::Superseded) => {
                        self.keep_pending(key, pending);
                        break;
                    }
                    Err(_) => self.log(
                        lsp_types::MessageType::ERROR,
                        format!("internal error while analysing {key}"),
                    ),
                }
            }
        }
        out.append(&mut self.outbox);
    }

    /// Put `key` and `rest` back at the front of the pending documents, in their order.
    fn keep_pending(&mut self, key: String, rest: impl Iterator<Item = String>) {
        let mut kept: Vec<String> = std::iter::once(key).chain(rest).collect();
        for k in std::mem::take(&mut self.pending) {
            if !kept.contains(&k) {
                kept.push(k);
            }
        }
        self.pending = kept;
    }

    fn publish_one(&mut self, key: &str, interruptions: &mut dyn Interruptions) -> Published {
        match self.diagnostics_of(key) {
            Some((uri, version, items)) => {
                if interruptions.document_changed(key) {
                    // Analysed at a text that is about to change: published after it is.
                    return Published::Superseded;
                }
                let Some(doc) = self.docs.get_mut(key) else {
                    return Published::Yes;
                };
                // Never a version older than one already published (the version only
                // grows while a document is open: this is a guard).
                if doc.published.is_some_and(|p| p > version) {
                    return Published::Yes;
                }
                doc.published = Some(version);
                doc.published_any = !items.is_empty();
                self.publish(uri, Some(version), items);
            }
            None => {
                // No longer a Fuzzfile (a YAML file lost its `version:`): clear what was shown.
                if let Some(doc) = self.docs.get_mut(key) {
                    if doc.published_any {
                        doc.published_any = false;
                        doc.published = Some(doc.version);
                        let (uri, version) = (doc.uri.clone(), doc.version);
                        self.publish(uri, Some(version), Vec::new());
                    }
                }
            }
        }
        Published::Yes
    }

    fn is_template(&self, uri: &Uri) -> bool {
        self.docs.get(uri.as_str()).is_some_and(|d| d.template)
    }

    /// The check of an open template at its current text, with its values file as it is now
    /// (the open document of that path, else the file on disk); kept while none of them
    /// changes.
    fn template_entry(
        &mut self,
        key: &str,
    ) -> Option<(
        Arc<fuzzfile_check::template::TemplateAnalysis>,
        Option<crate::template::ValuesDoc>,
    )> {
        let generation = self.settings.generation;
        self.clock += 1;
        let now = self.clock;
        let doc = self.docs.get(key).filter(|d| d.template)?;
        let (values, looked_for) = match &doc.path {
            Some(p) => crate::template::find_values(&doc.uri, p, |q| {
                self.docs
                    .values()
                    .find(|d| d.path.as_deref() == Some(q))
                    .map(|d| (d.uri.clone(), d.text.clone()))
            }),
            None => (None, Vec::new()),
        };
        if let Some(e) = self.templates.get_mut(key) {
            if e.generation == generation && e.values == values && e.analysis.text() == doc.text {
                e.last_used = now;
                return Some((Arc::clone(&e.analysis), values));
            }
        }
        let display = match &doc.path {
            Some(p) => p.display().to_string(),
            None => doc.uri.as_str().to_owned(),
        };
        let (text, path) = (doc.text.clone(), doc.path.clone());
        let (options, error) = self.settings.options_for(path.as_deref());
        if let Some(e) = error {
            self.show_error_once(e);
        }
        let analysis = Arc::new(crate::template::analyse(
            display,
            text,
            values.as_ref(),
            looked_for,
            &options,
        ));
        self.templates.insert(
            key.to_owned(),
            crate::template::Entry {
                generation,
                analysis: Arc::clone(&analysis),
                values: values.clone(),
                last_used: now,
            },
        );
        // As for Fuzzfiles: the checks of the most recently used templates only.
        while self.templates.len() > CACHED_ANALYSES {
            let oldest = self
                .templates
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.templates.remove(&k),
                None => break,
            };
        }
        Some((analysis, values))
    }

    /// Run `f` at a position of an open template.
    fn template_at<R>(
        &mut self,
        uri: &Uri,
        pos: lsp_types::Position,
        f: impl FnOnce(&crate::template::Ctx<'_>, u32) -> Option<R>,
    ) -> Option<R> {
        let (a, values) = self.template_entry(uri.as_str())?;
        let ctx = crate::template::Ctx {
            uri,
            analysis: &a,
            values: values.as_ref(),
            lines: Lines::new(a.text(), &a.line_index, self.encoding),
            encoding: self.encoding,
        };
        let offset = ctx.lines.offset_checked(pos)?;
        f(&ctx, offset)
    }

    fn template_diagnostics(
        &mut self,
        key: &str,
    ) -> Option<(Uri, i32, Vec<lsp_types::Diagnostic>)> {
        let (a, _) = self.template_entry(key)?;
        let doc = self.docs.get(key)?;
        let items = crate::template::diagnostics(&a, &doc.uri, self.encoding);
        Some((doc.uri.clone(), doc.version, items))
    }

    /// The open templates that read the values file at `path`.
    fn templates_reading(&self, path: &std::path::Path) -> Vec<String> {
        let mut keys: Vec<String> = self
            .docs
            .iter()
            .filter(|(_, d)| d.template)
            .filter(|(_, d)| {
                d.path.as_deref().is_some_and(|p| {
                    crate::template::values_paths(p)
                        .iter()
                        .any(|c| c.as_path() == path)
                })
            })
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        keys
    }

    /// The findings of an open values file, from the check of an open template that reads
    /// it; `None` (nothing published) when no open template reads it: a `values.yaml` of
    /// another tool is left alone.
    fn values_diagnostics(&mut self, key: &str) -> Option<(Uri, i32, Vec<lsp_types::Diagnostic>)> {
        let doc = self.docs.get(key)?;
        let path = doc.path.clone()?;
        for t in self.templates_reading(&path) {
            if let Some((a, Some(values))) = self.template_entry(&t) {
                if values.path == path {
                    let items = crate::template::values_diagnostics(&a, &values, self.encoding);
                    let doc = self.docs.get(key)?;
                    return Some((doc.uri.clone(), doc.version, items));
                }
            }
        }
        None
    }

    /// References of a value declared in an open values file (the cursor on its `name`): its
    /// declaration when asked for, and its uses in the open templates that read this file.
    /// `None` when the document is no values file or the cursor is on no declaration's name.
    fn values_references(
        &mut self,
        uri: &Uri,
        pos: lsp_types::Position,
        include_declaration: bool,
    ) -> Option<Vec<lsp_types::Location>> {
        let doc = self.docs.get(uri.as_str()).filter(|d| d.values)?;
        let path = doc.path.clone()?;
        let text = doc.text.clone();
        let index = fuzzfile_check::LineIndex::new(&text);
        let lines = Lines::new(&text, &index, self.encoding);
        let offset = lines.offset_checked(pos)?;
        let (name, range) = crate::template::declaration_at(&text, offset)?;
        let mut out = Vec::new();
        if include_declaration {
            out.push(lsp_types::Location::new(uri.clone(), lines.range(range)));
        }
        for t in self.templates_reading(&path) {
            if let Some((a, Some(values))) = self.template_entry(&t) {
                if values.path == path {
                    if let Some(tdoc) = self.docs.get(&t) {
                        out.extend(crate::template::value_references(
                            &name,
                            &a,
                            &tdoc.uri,
                            self.encoding,
                        ));
                    }
                }
            }
        }
        Some(out)
    }

    /// After a change to the document `key`: when it is a values file, the open templates
    /// that read it are checked again; when it is a template, its values file (if open)
    /// shows its findings again.
    fn mark_template_neighbours(&mut self, key: &str) {
        let Some(path) = crate::document::file_path(key) else {
            return;
        };
        if crate::template::is_values_uri(key) {
            let templates = self.templates_reading(&path);
            if !templates.is_empty() {
                // A client that pulls asks for the template's diagnostics again only when
                // told: the template's own version did not change.
                self.request_diagnostic_refresh();
            }
            for t in templates {
                self.mark(t);
            }
        } else if crate::template::is_template_uri(key) {
            let candidates = crate::template::values_paths(&path);
            let mut open: Vec<String> = self
                .docs
                .iter()
                .filter(|(_, d)| {
                    d.values && d.path.as_ref().is_some_and(|p| candidates.contains(p))
                })
                .map(|(k, _)| k.clone())
                .collect();
            open.sort();
            for k in open {
                self.mark(k);
            }
        }
    }

    /// What a document's diagnostics depend on besides its own text and the settings, for
    /// the result id of pulled diagnostics: a template's values file (its text, wherever it
    /// is read from); for a values file, the open templates that read it.
    fn dependency_stamp(&self, key: &str) -> String {
        use std::hash::{Hash, Hasher};
        let Some(doc) = self.docs.get(key) else {
            return String::new();
        };
        let mut h = std::hash::DefaultHasher::new();
        if doc.template {
            if let Some(p) = &doc.path {
                let (values, _) = crate::template::find_values(&doc.uri, p, |q| {
                    self.docs
                        .values()
                        .find(|d| d.path.as_deref() == Some(q))
                        .map(|d| (d.uri.clone(), d.text.clone()))
                });
                values.map(|v| (v.path, v.source.text)).hash(&mut h);
            }
        } else if doc.values {
            if let Some(p) = &doc.path {
                self.templates_reading(p).hash(&mut h);
            }
        } else {
            return String::new();
        }
        format!(":{:016x}", h.finish())
    }

    /// The number of open documents (for the benchmark's memory figure).
    pub fn open_documents(&self) -> usize {
        self.docs.len()
    }
}

/// `fuzzlint.toml` or a cluster profile (any TOML file) changed: settings may differ.
fn is_settings_file(uri: &str) -> bool {
    uri.to_ascii_lowercase().ends_with(".toml")
}

fn parse<P: DeserializeOwned>(params: Value) -> Result<P, ResponseError> {
    serde_json::from_value(params).map_err(|e| ResponseError {
        code: ErrorCode::InvalidParams as i32,
        message: format!("invalid parameters: {e}"),
        data: None,
    })
}

fn call<P: DeserializeOwned, R: Serialize>(
    params: Value,
    f: impl FnOnce(P) -> R,
) -> Result<Value, ResponseError> {
    let p = parse(params)?;
    serde_json::to_value(f(p)).map_err(|e| ResponseError {
        code: ErrorCode::InternalError as i32,
        message: format!("cannot encode the result: {e}"),
        data: None,
    })
}
