-- Healthy once spec and status agree on the size; the message is left out when healthy.
if obj.status ~= nil and obj.status.size == obj.spec.size then
  return {status = "Healthy"}
end
return {status = "Progressing", message = "size " .. (obj.status and obj.status.size or 0) .. " of " .. obj.spec.size}
