vim.api.nvim_create_user_command("LoreRecall", function(args)
  require("lore").recall(args.args)
end, { nargs = "+", desc = "Recall from lore-sidecar memory" })

vim.api.nvim_create_user_command("LoreStatus", function()
  require("lore").status()
end, { desc = "Show lore-sidecar status" })

vim.api.nvim_create_user_command("LoreRemember", function(args)
  local text = args.args
  if text == "" and args.range > 0 then
    text = table.concat(vim.api.nvim_buf_get_lines(0, args.line1 - 1, args.line2, false), "\n")
  end
  if text == "" then
    vim.notify("lore: nothing to remember (give text or a range)", vim.log.levels.WARN)
    return
  end
  require("lore").remember(text)
end, { nargs = "*", range = true, desc = "Keep text (or the selected lines) in lore-sidecar memory" })
