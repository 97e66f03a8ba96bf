-- What the headless Neovim scripts share: timed log lines on stdout, failing with exit status 1, and the
-- client configuration docs/editors.md gives, attached to ARGUS_FILE.
-- Loaded with dofile by nvim_smoke.lua, nvim_skill.lua and nvim_one_server.lua; env: ARGUS_CONFIG, ARGUS_FILE.
local M = {}
local t0 = vim.loop.hrtime()

function M.log(fmt, ...)
  io.stdout:write(string.format("[%5d ms] " .. fmt, math.floor((vim.loop.hrtime() - t0) / 1e6), ...) .. "\n")
end

function M.fail(message)
  M.log("FAIL: %s", message)
  io.stdout:flush()
  vim.cmd("cquit 1")
end

-- The user's configuration: the Lua block of docs/editors.md for this Neovim, which run_neovim writes to
-- ARGUS_CONFIG (its `cmd` is `argus serve` from the test's Python).
function M.configure()
  dofile(vim.env.ARGUS_CONFIG)
end

-- The ids of the clients attached to `buf` (Neovim 0.7 lists a client only once it is initialized).
function M.attached(buf)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.buf_get_clients(buf)
  return vim.tbl_map(function(c) return c.id end, vim.tbl_values(clients))
end

-- Opens ARGUS_FILE with that configuration; returns the id of the client attached to it once that client is
-- initialized (nil when none is within 20 s) and the buffer.
function M.open()
  M.configure()
  vim.cmd("edit " .. vim.fn.fnameescape(vim.env.ARGUS_FILE))
  local buf = vim.api.nvim_get_current_buf()
  vim.wait(20000, function() return #M.attached(buf) > 0 end, 20)
  return M.attached(buf)[1], buf
end

return M
