-- Health of a progressive-delivery object, in the style of a Rollout check: conditions,
-- pause state and replica counts. Written for gitops-core's tests and benchmark.
local hs = {}

local function condition(type_)
  if obj.status ~= nil and obj.status.conditions ~= nil then
    for _, c in ipairs(obj.status.conditions) do
      if c.type == type_ then
        return c
      end
    end
  end
  return nil
end

if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for status"
  return hs
end

if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= nil
    and tonumber(obj.status.observedGeneration) < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. obj.metadata.generation
  return hs
end

local invalid = condition("InvalidSpec")
if invalid ~= nil and invalid.status == "True" then
  hs.status = "Degraded"
  hs.message = invalid.message
  return hs
end

local progressing = condition("Progressing")
if progressing ~= nil and progressing.reason == "ProgressDeadlineExceeded" then
  hs.status = "Degraded"
  hs.message = progressing.message
  return hs
end

if obj.spec.paused == true or (obj.status.pauseConditions ~= nil and table.getn(obj.status.pauseConditions) > 0) then
  local reasons = {}
  for _, p in ipairs(obj.status.pauseConditions or {}) do
    table.insert(reasons, p.reason)
  end
  hs.status = "Suspended"
  if #reasons > 0 then
    hs.message = "Paused: " .. table.concat(reasons, ", ")
  else
    hs.message = "Paused"
  end
  return hs
end

local replicas = obj.spec.replicas or 1
local updated = obj.status.updatedReplicas or 0
local available = obj.status.availableReplicas or 0
local total = obj.status.replicas or 0

if updated < replicas then
  hs.status = "Progressing"
  hs.message = "Waiting for roll out to finish: " .. updated .. " out of " .. replicas .. " new replicas have been updated..."
  return hs
end
if total > updated then
  hs.status = "Progressing"
  hs.message = "Waiting for roll out to finish: " .. (total - updated) .. " old replicas are pending termination..."
  return hs
end
if available < updated then
  hs.status = "Progressing"
  hs.message = "Waiting for roll out to finish: " .. available .. " of " .. updated .. " updated replicas are available..."
  return hs
end

local healthy = condition("Healthy")
if healthy ~= nil and healthy.status == "False" then
  hs.status = "Degraded"
  hs.message = healthy.message or "Not healthy"
  return hs
end

hs.status = "Healthy"
hs.message = ""
return hs
