-- Headless Neovim 0.7 (Debian's) as a real editor for `argus serve`: open a kernel with a planted invariant
-- bug, read the verifier's diagnostic and the code actions on its line, apply the quick fix, and see the
-- diagnostic go. Run by tests/lsp/test_neovim.py; env: ARGUS_CONFIG, ARGUS_FILE.
local nvim = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_client.lua")
local log, fail = nvim.log, nvim.fail

local client_id, buf = nvim.open()
if not client_id then return fail("the client did not start") end
local function ar310()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == "AR310" then return d end
  end
end
if not vim.wait(20000, function() return ar310() ~= nil end, 20) then
  return fail("no AR310 diagnostic: " .. vim.inspect(vim.diagnostic.get(buf)))
end
local d = ar310()
log("diagnostic: line %d col %d %s[%s] %s", d.lnum + 1, d.col + 1, tostring(d.source), d.code, d.message)

-- the code action request Neovim's vim.lsp.buf.code_action() makes: the cursor, and the line's diagnostics
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.lnum, character = d.col } },
  context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, d.lnum) },
}
local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 10000)
local actions = responses and responses[client_id] and responses[client_id].result
if not actions or #actions == 0 then return fail("no code actions: " .. vim.inspect(responses)) end
local fix
for _, action in ipairs(actions) do
  log("code action: [%s] %s", tostring(action.kind), action.title)
  if action.kind == "quickfix" and not fix then fix = action end
end
if not fix then return fail("no quick fix") end

-- what Neovim's code action menu does with an action without an edit: resolve it, then apply the edit
if not fix.edit then
  local resolved = vim.lsp.buf_request_sync(buf, "codeAction/resolve", fix, 10000)
  fix = resolved and resolved[client_id] and resolved[client_id].result
  if not fix or not fix.edit then return fail("the quick fix resolved to no edit: " .. vim.inspect(resolved)) end
  log("resolved: edit for version %s", tostring(fix.edit.documentChanges and fix.edit.documentChanges[1].textDocument.version))
end
vim.lsp.util.apply_workspace_edit(fix.edit, "utf-16")
log("after the fix: %s", vim.api.nvim_buf_get_lines(buf, d.lnum - 1, d.lnum, false)[1])
if not vim.wait(20000, function() return ar310() == nil end, 20) then
  return fail("the diagnostic stayed after the fix")
end
log("diagnostics now: %d", #vim.diagnostic.get(buf))
vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
log("PASS")
io.stdout:flush()
vim.cmd("qa!")
