package team

import (
	"time"

	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/supervisor"
	"github.com/shogun-dev/shogun/usage"
)

// accountHistory keeps the supervisor's account limits in the history.
type accountHistory struct{ st *store.Store }

var _ supervisor.AccountHistory = accountHistory{}

func (h accountHistory) AccountLimits() ([]supervisor.AccountLimit, error) {
	list, err := h.st.AccountLimits()
	out := make([]supervisor.AccountLimit, len(list))
	for i, l := range list {
		out[i] = supervisor.AccountLimit{Account: l.Account, Role: l.Role, LimitedAt: l.LimitedAt, Until: l.Until}
	}
	return out, err
}

func (h accountHistory) RecordAccountLimit(l supervisor.AccountLimit) error {
	return h.st.RecordAccountLimit(store.AccountLimit{Account: l.Account, Role: l.Role, LimitedAt: l.LimitedAt, Until: l.Until})
}

// ConversationCopied records the copy's first size bytes as read: they
// are the records of the file it was copied from, counted there.
func (h accountHistory) ConversationCopied(role, path string, size int64) error {
	return h.st.AddUsage(store.UsageFile{Role: role, CLI: usage.CLIClaude, Path: path, Cursor: usage.Cursor{Offset: size}}, nil, time.Now())
}
