package main

// The auto-sync decision as far as Argo CD v3.6.2 exports it (pkg/apis/application/v1alpha1):
// SyncPolicy.IsAutomatedSyncEnabled, SyncWindows.Matches, SyncWindow.Active,
// SyncWindows.CanSync and RetryStrategy.NextRetryAt. The controller's own decision
// (ApplicationController.autoSync, alreadyAttemptedSync, selfHealRemainingBackoff in
// controller/appcontroller.go) is unexported and is not reached.

import (
	"encoding/json"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// A window in a time zone Go cannot load makes Argo CD warn once per read (and use UTC): the
// differential cases have many, so only errors are logged.
func init() {
	log.SetLevel(log.ErrorLevel)
}

type autosyncParams struct {
	App     v1alpha1.Application `json:"app"`
	Project struct {
		Spec struct {
			SyncWindows v1alpha1.SyncWindows `json:"syncWindows"`
		} `json:"spec"`
	} `json:"project"`
	Manual      bool                    `json:"manual"`
	Retry       *v1alpha1.RetryStrategy `json:"retry"`
	LastAttempt *time.Time              `json:"lastAttempt"`
	RetryCount  int64                   `json:"retryCount"`
}

type windowAnswer struct {
	Index  int    `json:"index"`
	Active *bool  `json:"active,omitempty"`
	Error  string `json:"error,omitempty"`
}

type autosyncAnswer struct {
	Now       string         `json:"now"`
	Automated bool           `json:"automated"`
	Matching  []windowAnswer `json:"matching"`
	CanSync   *bool          `json:"canSync,omitempty"`
	CanError  string         `json:"canSyncError,omitempty"`
	// NextRetryAt as unix nanoseconds, or its error.
	NextRetryAtNs *int64 `json:"nextRetryAtNs,omitempty"`
	RetryError    string `json:"retryError,omitempty"`
}

// windowsAt runs the functions that read the clock, Active and CanSync, within one second of
// the wall clock that is not the first second of a minute (a window start falls on one), so
// that the whole second they report stands for every instant they read.
func windowsAt(windows *v1alpha1.SyncWindows, manual bool, indices map[*v1alpha1.InlineSyncWindow]int) (time.Time, []windowAnswer, *bool, string) {
	for {
		before := time.Now().UTC()
		if before.Second() == 0 {
			time.Sleep(time.Until(before.Truncate(time.Second).Add(time.Second)))
			continue
		}
		var answers []windowAnswer
		if windows != nil {
			for _, w := range *windows {
				a := windowAnswer{Index: indices[w]}
				on, err := w.Active()
				if err != nil {
					a.Error = err.Error()
				} else {
					a.Active = &on
				}
				answers = append(answers, a)
			}
		}
		ok, err := windows.CanSync(manual, nil)
		after := time.Now().UTC()
		if before.Truncate(time.Second).Equal(after.Truncate(time.Second)) {
			var can *bool
			msg := ""
			if err != nil {
				msg = err.Error()
			} else {
				can = &ok
			}
			return before.Truncate(time.Second), answers, can, msg
		}
	}
}

func (s *server) autosync(raw json.RawMessage) (any, error) {
	var p autosyncParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	var answer autosyncAnswer
	if p.App.Spec.SyncPolicy != nil {
		answer.Automated = p.App.Spec.SyncPolicy.IsAutomatedSyncEnabled()
	}
	all := p.Project.Spec.SyncWindows
	indices := map[*v1alpha1.InlineSyncWindow]int{}
	for i, w := range all {
		indices[w] = i
	}
	matching := all.Matches(&p.App)
	now, answers, can, msg := windowsAt(matching, p.Manual, indices)
	answer.Now = now.Format(time.RFC3339)
	answer.Matching = answers
	if answer.Matching == nil {
		answer.Matching = []windowAnswer{}
	}
	answer.CanSync, answer.CanError = can, msg
	if p.Retry != nil && p.LastAttempt != nil {
		at, err := p.Retry.NextRetryAt(*p.LastAttempt, p.RetryCount)
		if err != nil {
			answer.RetryError = err.Error()
		} else {
			ns := at.UnixNano()
			answer.NextRetryAtNs = &ns
		}
	}
	return answer, nil
}
