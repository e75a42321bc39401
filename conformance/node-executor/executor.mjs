// A real XXL-JOB executor on the npm `xxl-job` SDK. Configured by environment:
//   ADMIN    admin base URL, e.g. http://127.0.0.1:8080/xxl-job-admin
//   APPNAME  executor app name (registry key)
//   PORT     port to listen on; 0 takes any free one (READY names it)
//   TOKEN    access token ("" for none)
//   LOG_STORAGE  the SDK's logStorage: 'local' (default here) or 'memory' (the SDK's
//            own default, which keeps no log the admin can read)
//   TRACE    when set, prints "RUN <json>" ({jobId, logId, params}) for every run
//            request received, before the SDK sees it: what the admins sent, counted
//            at the executor
// Handlers: demoJobHandler, failJobHandler, slowJobHandler (param = seconds),
// shardingJobHandler, echoJobHandler (returns its parameter, parsed when it is JSON; the
// SDK sends a handler's result JSON-encoded as the handle message).
// Prints "READY <port>" once listening. Callbacks and registrations survive an admin
// restart (retry.mjs).
import './retry.mjs'
import express from 'express'
import { createXxlJobExecutor } from 'xxl-job'

const admin = process.env.ADMIN || 'http://127.0.0.1:8080/xxl-job-admin'
const appName = process.env.APPNAME || 'xxl-job-executor-sample'
const port = Number(process.env.PORT || 9999)
const token = process.env.TOKEN ?? 'default_token'

// The SDK's 30 s registry timer rejects when the admin is down; keep running, as a
// Java executor would, and retry on the next beat.
process.on('unhandledRejection', (e) => console.error('unhandled:', e?.message || e))

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const handlers = new Map()
handlers.set('demoJobHandler', async (logger, req, params) => {
  logger.info(`demo params=${params}`)
  return `demo ok ${params ?? ''}`.trim()
})
handlers.set('failJobHandler', async () => {
  throw new Error('failJobHandler failed on purpose')
})
handlers.set('slowJobHandler', async (logger, req, params) => {
  const secs = Number(params || 5)
  for (let i = 0; i < secs * 10; i++) {
    if (req.isKill()) throw new Error('killed')
    await sleep(100)
  }
  return `slept ${secs}s`
})
handlers.set('echoJobHandler', async (logger, req, params) => {
  try { return JSON.parse(params) } catch { return params ?? '' }
})
handlers.set('shardingJobHandler', async (logger, req) => `shard ${req.broadcastIndex}/${req.broadcastTotal}`)

const app = express()
app.use(express.json({ limit: '5mb' }))
if (process.env.TRACE) {
  app.use((req, res, next) => {
    if (req.method === 'POST' && req.path.endsWith('/run')) {
      const b = req.body || {}
      console.log('RUN ' + JSON.stringify({ jobId: b.jobId, logId: b.logId, params: b.executorParams }))
    }
    next()
  })
}
const server = app.listen(port, '127.0.0.1', () => {
  const bound = server.address().port
  const executor = createXxlJobExecutor({
    app,
    appType: 'express',
    jobHandlers: handlers,
    accessToken: token,
    baseUrl: `http://127.0.0.1:${bound}`,
    executorKey: appName,
    scheduleCenterUrl: admin,
    logStorage: process.env.LOG_STORAGE || 'local',
  })
  executor.initialization()
  const stop = async () => {
    try { await executor.cancel() } catch (e) { console.error('registryRemove failed:', e?.message || e) }
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  console.log(`READY ${bound}`)
})
