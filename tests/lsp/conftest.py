"""`fuzzlint server` under pytest-lsp: the real binary on stdio, driven by a real client.

The binary is `$FUZZLINT` (set by run.sh), else target/debug/fuzzlint.
"""

import os
import pathlib

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities, make_test_lsp_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZLINT = os.environ.get("FUZZLINT", str(ROOT / "target" / "debug" / "fuzzlint"))


def make_client() -> LanguageClient:
    """The test client, answering dynamic registrations as an editor does."""
    client = make_test_lsp_client()
    client.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(ls: LanguageClient, params: types.RegistrationParams):
        ls.registrations.extend(params.registrations)

    return client


CONFIG = ClientServerConfig(server_command=[FUZZLINT, "server"], client_factory=make_client)


def start(lsp_client: LanguageClient, capabilities, options=None, root=None):
    params = types.InitializeParams(
        capabilities=capabilities,
        initialization_options=options,
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="w")] if root else None,
    )
    return lsp_client.initialize_session(params)


@pytest_lsp.fixture(
    config=CONFIG,
    params=["visual-studio-code@v1.65.2", "neovim@v0.10.0", "neovim@v0.11.0"],
)
async def client(request, lsp_client: LanguageClient):
    """A client with the capabilities of a real editor: VS Code 1.65 (push diagnostics,
    UTF-16), Neovim 0.10 (pull diagnostics, UTF-16) and 0.11 (pull, offers UTF-8)."""
    result = await start(lsp_client, client_capabilities(request.param))
    lsp_client.init_result = result
    lsp_client.editor = request.param
    lsp_client.enc = result.capabilities.position_encoding
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def utf8_client(lsp_client: LanguageClient):
    """A client that offers UTF-8 positions."""
    caps = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]
        ),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        ),
    )
    result = await start(lsp_client, caps)
    lsp_client.init_result = result
    lsp_client.editor = "utf-8 client"
    lsp_client.enc = result.capabilities.position_encoding
    yield
    await lsp_client.shutdown_session()
