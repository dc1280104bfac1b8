-- bench/wrk-mix.lua: the read pages of docs/workload.md's profile, for wrk.
-- bench/wrk-mix.sh sets SLUGS, USERS, TAGS and TOKEN in the environment.
-- Each request is drawn by the profile's weights (writes left out: this is
-- a read-heavy throughput check, not the virtual-user load of conduit-bench).
local slugs, users, tags = {}, {}, {}
for s in string.gmatch(os.getenv("SLUGS") or "", "%S+") do slugs[#slugs + 1] = s end
for s in string.gmatch(os.getenv("USERS") or "", "%S+") do users[#users + 1] = s end
for s in string.gmatch(os.getenv("TAGS") or "", "%S+") do tags[#tags + 1] = s end
local token = os.getenv("TOKEN") or ""

local function pick(t) return t[math.random(#t)] end

-- {weight, function returning a path, authenticated?}
local mix = {
  {20, function() return "/api/articles?limit=10&offset=0" end},
  {20, function() return "/api/tags" end},
  {15, function() return "/api/articles/feed?limit=10&offset=0" end, true},
  {5,  function() return "/api/articles?limit=10&offset=" .. 10 * math.random(20) end},
  {10, function() return "/api/articles?tag=" .. pick(tags) .. "&limit=10&offset=0" end},
  {30, function() return "/api/articles/" .. pick(slugs) end},
  {30, function() return "/api/articles/" .. pick(slugs) .. "/comments" end},
  {8,  function() return "/api/profiles/" .. pick(users) end},
  {8,  function() return "/api/articles?author=" .. pick(users) .. "&limit=10" end},
  {3,  function() return "/api/articles?favorited=" .. pick(users) .. "&limit=10" end},
}
local total = 0
for _, m in ipairs(mix) do total = total + m[1] end

function setup(thread) thread:set("id", math.random(1000000)) end
function init() math.randomseed(id) end

function request()
  local r = math.random(total)
  for _, m in ipairs(mix) do
    r = r - m[1]
    if r <= 0 then
      local headers = {}
      if m[3] then headers["Authorization"] = "Token " .. token end
      return wrk.format("GET", m[2](), headers)
    end
  end
end
