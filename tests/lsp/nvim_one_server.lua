-- Headless Neovim (0.7 or 0.11) with the configuration of docs/editors.md for its version (ARGUS_CONFIG): three
-- buffers of one workspace, `:edit!` of one, `:set ft=argus` of another, and a fourth buffer in a second
-- workspace. Each workspace must have exactly one client and one `argus serve` process, attached to each of its
-- buffers, and every buffer must get the server's diagnostics. Run by tests/lsp/test_neovim.py; env:
-- ARGUS_CONFIG (the Lua block of docs/editors.md), ARGUS_FILE (the first file; the others are its siblings
-- b.argus, c.argus, and other/d.argus in a second workspace).
local nvim = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_client.lua")
local log, fail = nvim.log, nvim.fail

local v = vim.version()
log("nvim %d.%d.%d", v.major, v.minor, v.patch)
nvim.configure()

local function argus_clients()
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  return vim.tbl_filter(function(c) return c.name == "argus" end, all)
end

local attached = nvim.attached

-- the language servers Neovim started: its child processes running `... argus serve`
local function servers()
  local me, found = vim.fn.getpid(), {}
  for _, name in ipairs(vim.fn.readdir("/proc")) do
    if name:match("^%d+$") then
      local ok, stat = pcall(vim.fn.readfile, "/proc/" .. name .. "/stat")
      local ppid = ok and stat[1] and stat[1]:match("^.*%) %S+ (%d+)")
      if ppid and tonumber(ppid) == me then
        local cmd = table.concat(vim.fn.readfile("/proc/" .. name .. "/cmdline", "b"), " "):gsub("%z", " ")
        if cmd:find("argus") and cmd:find("serve") then table.insert(found, tonumber(name)) end
      end
    end
  end
  return found
end

local function has_diagnostics(buf)
  return #vim.diagnostic.get(buf) > 0
end

local dir = vim.fn.fnamemodify(vim.env.ARGUS_FILE, ":p:h")
local paths = { dir .. "/a.argus", dir .. "/b.argus", dir .. "/c.argus", dir .. "/other/d.argus" }
local bufs = {}
for i, path in ipairs(paths) do
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  bufs[i] = vim.api.nvim_get_current_buf()
  log("opened %s: filetype %s", vim.fn.fnamemodify(path, ":t"), vim.bo[bufs[i]].filetype)
  if vim.bo[bufs[i]].filetype ~= "argus" then return fail("filetype is not argus") end
end
for i, buf in ipairs(bufs) do
  if not vim.wait(30000, function() return has_diagnostics(buf) end, 20) then
    return fail(string.format("no diagnostics for buffer %d (attached clients: %s)", i, vim.inspect(attached(buf))))
  end
end
log("diagnostics arrived in all %d buffers", #bufs)

-- :edit! reloads a buffer and :set ft fires FileType again; neither may start another server
vim.cmd("buffer " .. bufs[1])
vim.diagnostic.reset(nil, bufs[1])
vim.cmd("edit!")
log(":edit! of a.argus")
vim.cmd("buffer " .. bufs[2])
vim.cmd("set ft=argus")
log(":set ft=argus in b.argus")
-- the reloaded buffer is opened again on its server, which checks it again
if not vim.wait(30000, function() return has_diagnostics(bufs[1]) end, 20) then
  return fail("no diagnostics for a.argus after :edit! (attached clients: " .. vim.inspect(attached(bufs[1])) .. ")")
end
log("diagnostics of a.argus arrived again after :edit!")

local clients, processes = argus_clients(), servers()
local by_root = {}
for _, c in ipairs(clients) do
  by_root[c.config.root_dir or "(none)"] = (by_root[c.config.root_dir or "(none)"] or 0) + 1
end
log("argus clients: %d, server processes: %d", #clients, #processes)
for root, n in pairs(by_root) do log("root %s: %d client(s)", vim.fn.fnamemodify(root, ":t"), n) end
for i, buf in ipairs(bufs) do
  log("buffer %s: clients %s", vim.fn.fnamemodify(paths[i], ":t"), table.concat(attached(buf), ","))
end
if #clients ~= 2 or #processes ~= 2 then
  return fail(string.format("expected 2 clients and 2 servers (one per workspace), got %d and %d", #clients, #processes))
end
local first = attached(bufs[1])
for i = 2, 3 do
  local ids = attached(bufs[i])
  if #ids ~= 1 or ids[1] ~= first[1] then return fail("the workspace's buffers are not on one client") end
end
local other = attached(bufs[4])
if #first ~= 1 or #other ~= 1 or other[1] == first[1] then
  return fail("the second workspace's buffer is not on a client of its own")
end
for _, c in ipairs(clients) do
  vim.lsp.stop_client(c.id)
end
vim.wait(5000, function() return #argus_clients() == 0 end, 20)
log("PASS")
io.stdout:flush()
vim.cmd("qa!")
