// Package workflowjson holds the JSON views of workflows, their runs and the runs'
// nodes that the console's Workflows page (routes/console) and the OpenAPI's
// workflow calls (routes/openapi) answer with. Date-times are "yyyy-MM-dd HH:mm:ss"
// in the admin's zone, null when unset.
package workflowjson

import (
	"encoding/json"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Workflow is a workflow definition. Next is the type of its next start: a date-time
// (*string) on the console, ms since 1970 (int64) in the OpenAPI.
type Workflow[Next any] struct {
	ID              int             `json:"id"`
	Name            string          `json:"name"`
	Graph           json.RawMessage `json:"graph"`
	Groups          []int           `json:"groups"`
	ScheduleType    string          `json:"scheduleType"`
	ScheduleConf    string          `json:"scheduleConf"`
	MisfireStrategy string          `json:"misfireStrategy"`
	FailurePolicy   string          `json:"failurePolicy"`
	RunTimeout      int             `json:"runTimeout"`
	Scheduled       bool            `json:"scheduled"`
	TimeZone        string          `json:"timeZone"`
	TriggerNextTime Next            `json:"triggerNextTime"`
	Author          string          `json:"author"`
	UpdateTime      *string         `json:"updateTime"`
}

// NewWorkflow is the view of w with graph (the caller's rendering of w.Graph, which a
// hand edit may have left invalid) and next as its next start.
func NewWorkflow[Next any](w schema.Workflow, graph json.RawMessage, next Next, loc *time.Location) Workflow[Next] {
	return Workflow[Next]{ID: w.ID, Name: w.Name, Graph: graph, Groups: append([]int{}, w.Groups...), ScheduleType: w.ScheduleType,
		ScheduleConf: w.ScheduleConf, MisfireStrategy: w.MisfireStrategy, FailurePolicy: w.FailurePolicy, RunTimeout: w.RunTimeout,
		Scheduled: w.TriggerStatus == 1, TimeZone: w.TimeZone, TriggerNextTime: next, Author: w.Author,
		UpdateTime: Time(w.UpdateTime, loc)}
}

// Run is a run of a workflow; Nodes only when one run is read. Graph and CreateUser
// are the console's: absent when not set.
type Run struct {
	ID          int64           `json:"id"`
	WorkflowID  int             `json:"workflowId"`
	Graph       json.RawMessage `json:"graph,omitempty"`
	State       string          `json:"state"`
	Input       string          `json:"input"`
	TriggerType string          `json:"triggerType"`
	FireTime    *string         `json:"fireTime"`
	StartTime   *string         `json:"startTime"`
	EndTime     *string         `json:"endTime"`
	Msg         string          `json:"msg"`
	CreateUser  *string         `json:"createUser,omitempty"`
	Nodes       []NodeRun       `json:"nodes,omitempty"`
}

// NodeRun is a node of a run: its state, output (the handle message its executor
// reported), rendered parameter and the log of its latest attempt (0 before it fired).
type NodeRun struct {
	Name      string  `json:"name"`
	JobID     int     `json:"jobId"`
	State     string  `json:"state"`
	Attempt   int     `json:"attempt"`
	LogID     int64   `json:"logId"`
	Param     string  `json:"param"`
	Output    string  `json:"output"`
	StartTime *string `json:"startTime"`
	EndTime   *string `json:"endTime"`
	Msg       string  `json:"msg"`
}

// NewRun is the view of r with its nodes (none in a list of runs), without Graph and
// CreateUser.
func NewRun(r schema.WorkflowRun, nodes []schema.NodeRun, loc *time.Location) Run {
	out := Run{ID: r.ID, WorkflowID: r.WorkflowID, State: r.State, Input: r.Input, TriggerType: r.TriggerType,
		FireTime: Time(r.FireTime, loc), StartTime: Time(r.StartTime, loc), EndTime: Time(r.EndTime, loc), Msg: r.Msg}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, NodeRun{Name: n.Node, JobID: n.JobID, State: n.State, Attempt: n.Attempt, LogID: n.LogID,
			Param: n.Param, Output: n.Output, StartTime: Time(n.StartTime, loc), EndTime: Time(n.EndTime, loc), Msg: n.Msg})
	}
	return out
}

// Time is ms since 1970 as a date-time in loc; nil when not set (0 or less).
func Time(ms int64, loc *time.Location) *string {
	if ms <= 0 {
		return nil
	}
	s := time.UnixMilli(ms).In(loc).Format(manage.DateTimeLayout)
	return &s
}
