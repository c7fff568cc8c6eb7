package control

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Ask hands the supervisor an action a role's CLI wants to take. The
// answer is decided, or pending: then WaitApproval until it is not.
func (c *Client) Ask(req ApprovalRequest) (Approval, error) {
	var a Approval
	return a, c.do(http.MethodPost, "/v1/approvals", req, &a)
}

// WaitApproval returns approval id once it is decided, or after wait (at
// most 30 s, the server's bound) as it is then.
func (c *Client) WaitApproval(id int64, wait time.Duration) (Approval, error) {
	var a Approval
	path := fmt.Sprintf("/v1/approvals/%d?wait=%s", id, strconv.FormatFloat(wait.Seconds(), 'f', -1, 64))
	return a, c.doWithin(wait+c.timeout, http.MethodGet, path, nil, &a)
}

// Approvals lists the decisions asked at or after since (zero: all; n > 0:
// the last n), or with pending the questions waiting for a person.
func (c *Client) Approvals(since time.Time, n int, pending bool) (ApprovalsReply, error) {
	q := url.Values{}
	if pending {
		q.Set("pending", "true")
	}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339))
	}
	if n > 0 {
		q.Set("limit", strconv.Itoa(n))
	}
	var r ApprovalsReply
	return r, c.do(http.MethodGet, "/v1/approvals?"+q.Encode(), nil, &r)
}

// AnswerRole answers a question waiting for role: the one req.ID names,
// else its only one.
func (c *Client) AnswerRole(role string, req AnswerRequest) (Approval, error) {
	var a Approval
	return a, c.do(http.MethodPost, "/v1/roles/"+url.PathEscape(role)+"/answer", req, &a)
}

// Answer answers the question with the given id.
func (c *Client) Answer(id int64, req AnswerRequest) (Approval, error) {
	var a Approval
	return a, c.do(http.MethodPost, fmt.Sprintf("/v1/approvals/%d/answer", id), req, &a)
}

// Questions lists what waits for a person's answer now.
func (c *Client) Questions() (QuestionsReply, error) {
	var r QuestionsReply
	return r, c.do(http.MethodGet, "/v1/questions", nil, &r)
}
