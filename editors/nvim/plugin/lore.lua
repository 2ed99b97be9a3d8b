vim.api.nvim_create_user_command("LoreRecall", function(args)
  require("lore").recall(args.args)
end, { nargs = "+", desc = "Recall from lore-sidecar memory" })

vim.api.nvim_create_user_command("LoreStatus", function()
  require("lore").status()
end, { desc = "Show lore-sidecar status" })
