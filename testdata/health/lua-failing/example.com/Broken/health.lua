-- A deliberately failing fixture for `gitops-core test-health`: one case passes, one has the
-- wrong message, one makes the script fail.
if obj.spec.fail then
  error("asked to fail")
end
return {status = "Healthy", message = "fine"}
