//! Sync planning: tasks, waves and hooks, the step function, and automated-sync decisions.
