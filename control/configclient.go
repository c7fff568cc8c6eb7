package control

import "net/http"

// Roles returns every configured role with its effective settings and, for
// the running ones, their status.
func (c *Client) Roles() (RolesReply, error) {
	var r RolesReply
	return r, c.do(http.MethodGet, "/v1/roles", nil, &r)
}

// Reload asks the supervisor to read its configuration files again and
// take them into use (it may stop and start roles: the longer deadline). A configuration with errors is an error listing
// each problem, one per line; the supervisor keeps the one it has.
func (c *Client) Reload() (ReloadReply, error) {
	var r ReloadReply
	return r, c.doWithin(c.slowTimeout, http.MethodPost, "/v1/reload", nil, &r)
}
