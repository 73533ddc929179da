-- Any kind of any *.example.org group: Ready condition decides.
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      if c.status == "True" then
        return {status = "Healthy", message = c.message}
      end
      return {status = "Degraded", message = c.reason .. ": " .. c.message}
    end
  end
end
return {status = "Progressing", message = "Waiting for the Ready condition"}
