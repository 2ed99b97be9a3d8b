-- lore-sidecar for Neovim 0.11+: starts the sidecar with vim.lsp.config/enable and offers
-- :LoreRecall {query} (hits in the quickfix list), :LoreRemember {text} (or a visual
-- selection: kept as a knowledge node) and :LoreStatus (a floating window).
local M = {}

M.defaults = {
  cmd = { "lore-sidecar", "--stdio" },
  root_markers = { ".git" },
  init_options = {},
}

-- The workspace of a buffer: the nearest folder above it holding a root marker (.git by
-- default), else the current directory — memory works outside repositories too. Which
-- root was chosen is said once per root, so an unexpected one is noticed.
local announced = {}

function M.root_for(bufnr, markers)
  local root = vim.fs.root(bufnr, markers)
  local reason = "found " .. table.concat(markers, " or ")
  if not root then
    root = vim.fn.getcwd()
    reason = "no " .. table.concat(markers, " or ") .. " above the file; using the current directory"
  end
  return root, reason
end

function M.setup(opts)
  opts = vim.tbl_deep_extend("force", M.defaults, opts or {})
  vim.lsp.config("lore", {
    cmd = opts.cmd,
    root_dir = function(bufnr, on_dir)
      local root, reason = M.root_for(bufnr, opts.root_markers)
      if not announced[root] then
        announced[root] = true
        vim.notify("lore: workspace " .. root .. " (" .. reason .. ")", vim.log.levels.INFO)
      end
      on_dir(root)
    end,
    init_options = opts.init_options,
  })
  vim.lsp.enable("lore")
end

function M.client()
  return vim.lsp.get_clients({ name = "lore" })[1]
end

-- Sends a lore/* request; calls cb(err, result) when it is answered.
function M.request(method, params, cb)
  local client = M.client()
  if not client then
    cb({ message = "lore-sidecar is not running" }, nil)
    return
  end
  client:request(method, params, function(err, result)
    cb(err, result)
  end)
end

function M.recall(query, cb)
  M.request("lore/recall", { query = query, limit = 20 }, cb or function(err, result)
    if err then
      vim.notify("lore: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local items = {}
    for _, hit in ipairs(result.hits) do
      local filename, lnum = hit.path, hit.range and hit.range.startLine or 1
      table.insert(items, {
        filename = filename,
        lnum = lnum,
        text = string.format("%.3f %s  %s", hit.score, hit.uri, hit.snippet),
      })
    end
    vim.fn.setqflist({}, " ", { title = "lore: " .. query, items = items })
    vim.cmd("copen")
  end)
end

-- Keeps `text` as a knowledge node (lore/retain); cb(err, result) gets {uri, version, created}.
function M.remember(text, cb)
  local title = text:gsub("%s+", " "):sub(1, 60)
  M.request("lore/retain", { content = text, title = title, harness = "nvim" }, cb or function(err, result)
    if err then
      vim.notify("lore: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      vim.notify("lore: remembered as " .. result.uri)
    end
  end)
end

-- The status as lines (also what the floating window shows).
function M.status_lines(s)
  local c = s.counts or {}
  return {
    string.format("lore-sidecar %s  (%s, writer pid %s)", s.version or "?", s.role or "?", tostring(s.writerPid)),
    "store:     " .. tostring(s.storeDir),
    "project:   " .. tostring(s.project and s.project.root),
    string.format("messages %d · distillations %d · knowledge %d · facts %d · files %d",
      c.messages or 0, c.distillations or 0, c.knowledge or 0, c.facts or 0, c.files or 0),
    "embedder:  " .. tostring(s.embedder and s.embedder.name),
    "distiller: " .. tostring(s.distiller and s.distiller.mode),
  }
end

function M.status(cb)
  M.request("lore/status", vim.empty_dict(), cb or function(err, result)
    if err then
      vim.notify("lore: " .. (err.message or ""), vim.log.levels.ERROR)
    else
      vim.lsp.util.open_floating_preview(M.status_lines(result), "text", { border = "rounded", focus_id = "lore-status" })
    end
  end)
end

return M
