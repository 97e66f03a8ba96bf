-- What the headless Neovim scripts share: timed log lines on stdout, failing with exit status 1, and the
-- client configuration docs/editors.md gives (this test's python and folder) attached to ARGUS_FILE.
-- Loaded with dofile by nvim_smoke.lua and nvim_skill.lua; env: ARGUS_PYTHON, ARGUS_FILE.
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

-- Opens ARGUS_FILE with `argus serve` attached; returns the client id (nil when it did not start) and the buffer.
function M.open()
  vim.cmd([[autocmd BufRead,BufNewFile *.argus setfiletype argus]])
  local client_id
  vim.api.nvim_create_autocmd("FileType", {
    pattern = "argus",
    callback = function(args)
      client_id = vim.lsp.start_client({
        name = "argus",
        cmd = { vim.env.ARGUS_PYTHON, "-m", "argus", "serve" },
        root_dir = vim.fn.fnamemodify(vim.env.ARGUS_FILE, ":p:h"),
        init_options = { argus = { gate = { device = "cpu" } } },
        settings = { argus = { debounceMs = 150 } },
      })
      vim.lsp.buf_attach_client(args.buf, client_id)
    end,
  })
  vim.cmd("edit " .. vim.fn.fnameescape(vim.env.ARGUS_FILE))
  return client_id, vim.api.nvim_get_current_buf()
end

return M
