-- Fixture: its health_test.yaml names an input that does not exist.
return {status = "Healthy"}
