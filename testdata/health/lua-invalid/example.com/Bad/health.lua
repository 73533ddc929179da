-- Fixture: its health_test.yaml is malformed.
return {status = "Healthy"}
