package protocol

// TriggerParam is the body of /run (P1–P2) and /trigger (P3): one execution request
// (wire-protocol.md §6.1). Java's int fields are int here, long fields int64.
//
// Strings are never null on our side: an empty string is sent as "" where Gson would
// omit a null field. No executor distinguishes the two for these fields.
type TriggerParam struct {
	JobID                 int    `json:"jobId"`
	ExecutorHandler       string `json:"executorHandler"`
	ExecutorParams        string `json:"executorParams"`
	ExecutorBlockStrategy string `json:"executorBlockStrategy"`
	ExecutorTimeout       int    `json:"executorTimeout"`
	LogID                 int64  `json:"logId"`
	// LogDateTime is the trigger time in epoch ms; the executor derives its log folder from it.
	LogDateTime    int64  `json:"logDateTime"`
	GlueType       string `json:"glueType"`
	GlueSource     string `json:"glueSource"`
	GlueUpdatetime int64  `json:"glueUpdatetime"`
	BroadcastIndex int    `json:"broadcastIndex"`
	BroadcastTotal int    `json:"broadcastTotal"`
}

// CallbackItem is one execution result an executor reports on /api/callback
// (wire-protocol.md §4.4, §6.2).
type CallbackItem struct {
	LogID int64
	// LogDateTime is the echo of the trigger's logDateTime, spelled "logDateTim" on the
	// wire by P1–P2 and "logDateTime" by P3. The admin does not use it.
	LogDateTime int64
	HandleCode  int
	// HandleMsg is nil when the executor sent no message (absent or null), which the
	// completion logic treats differently from an empty message.
	HandleMsg *string
}

// RegistryParam is the body of /api/registry and /api/registryRemove.
type RegistryParam struct {
	RegistryGroup string `json:"registryGroup"`
	RegistryKey   string `json:"registryKey"`
	RegistryValue string `json:"registryValue"`
}

// IdleBeatParam is the body of /idleBeat.
type IdleBeatParam struct {
	JobID int `json:"jobId"`
}

// KillParam is the body of /kill; on the wire it is the same object as IdleBeatParam.
type KillParam = IdleBeatParam

// LogParam is the body of /log: a rolling read of one execution's log file from line
// FromLineNum (1-based). P1–P2 spell the date field "logDateTim", P3 "logDateTime".
type LogParam struct {
	LogDateTime int64
	LogID       int64
	FromLineNum int
}

// LogResult is the payload of a /log reply (wire-protocol.md §6.5).
type LogResult struct {
	FromLineNum int `json:"fromLineNum"`
	// ToLineNum is the file's line count: lines FromLineNum..ToLineNum were returned.
	ToLineNum  int    `json:"toLineNum"`
	LogContent string `json:"logContent"`
	IsEnd      bool   `json:"isEnd"`
}
