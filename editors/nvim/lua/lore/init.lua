-- lore-sidecar for Neovim 0.11+: starts the sidecar with vim.lsp.config/enable and offers
-- :LoreRecall {query}, :LoreStatus. Results open in a quickfix list.
local M = {}

M.defaults = {
  cmd = { "lore-sidecar", "--stdio" },
  root_markers = { ".git" },
  init_options = {},
}

function M.setup(opts)
  opts = vim.tbl_deep_extend("force", M.defaults, opts or {})
  vim.lsp.config("lore", {
    cmd = opts.cmd,
    root_markers = opts.root_markers,
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

function M.status()
  M.request("lore/status", {}, function(err, result)
    if err then
      vim.notify("lore: " .. (err.message or ""), vim.log.levels.ERROR)
    else
      vim.notify(vim.inspect(result))
    end
  end)
end

return M
