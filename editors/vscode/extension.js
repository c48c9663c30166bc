// The smallest client of `bankwise server`: the server does the work (diagnostics, the fix
// as a code action, the banks on hover); this starts it for CUDA files.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate() {
  const config = vscode.workspace.getConfiguration("bankwise");
  const server = {
    command: config.get("path", "bankwise"),
    args: ["server", ...config.get("args", [])],
  };
  client = new LanguageClient(
    "bankwise",
    "bankwise",
    { run: server, debug: server },
    {
      documentSelector: [
        { scheme: "file", language: "cuda-cpp" },
        { scheme: "file", language: "cuda" },
      ],
    }
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
