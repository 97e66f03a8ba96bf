-- Headless Neovim 0.7 picks a library skill from its code action menu, as a user does: the server's
-- argus.applySkill edits the buffer through workspace/applyEdit and starts a gate run, whose progress Neovim
-- records. Run by tests/lsp/test_skill_apply.py; env: ARGUS_CONFIG, ARGUS_FILE.
local nvim = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_client.lua")
local log, fail = nvim.log, nvim.fail

local client_id, buf = nvim.open()
if not client_id then return fail("the client did not start") end
if not vim.wait(20000, function() return vim.lsp.get_client_by_id(client_id).initialized end, 20) then
  return fail("the server did not initialize")
end
local line = vim.fn.search("policy num_warps = 4")
vim.api.nvim_win_set_cursor(0, { line, 4 })

-- the menu of vim.lsp.buf.code_action(): pick the library skill by its title
local picked
vim.ui.select = function(items, opts, on_choice)
  for index, item in ipairs(items) do
    local action = item[2]
    log("menu: %s", action.title)
    if action.title:find("Skill: More warps", 1, true) then
      picked = action
      return on_choice(item, index)
    end
  end
  on_choice(nil, nil)
end
vim.wait(3000, function() return false end, 50) -- let the first check publish
vim.lsp.buf.code_action()
if not vim.wait(20000, function() return picked ~= nil end, 20) then return fail("no library skill in the menu") end
log("picked: %s (command %s)", picked.title, picked.command and picked.command.command or "none")

local function current() return vim.api.nvim_buf_get_lines(buf, line - 1, line, false)[1] end
if not vim.wait(30000, function() return current():find("num_warps = 8", 1, true) ~= nil end, 20) then
  return fail("the skill's edit did not arrive: " .. current())
end
log("after the skill: %s", current())

local function gate_done()
  local client = vim.lsp.get_client_by_id(client_id)
  for _, progress in pairs(client.messages.progress) do
    if progress.title == "Argus gate" and progress.done then return progress end
  end
end
if not vim.wait(240000, function() return gate_done() ~= nil end, 100) then
  return fail("no gate run ended: " .. vim.inspect(vim.lsp.get_client_by_id(client_id).messages.progress))
end
log("gate: %s", tostring(gate_done().message))
log("PASS")
io.stdout:flush()
vim.cmd("qall!")
