// Callbacks and registrations that survive an admin restart. The SDK posts each
// result once and, when that fails (the admin restarting: ECONNREFUSED), its job stays
// "running" for good: every later run of the job is refused as busy. A Java executor
// keeps failed callbacks and retries them; so does this one: a request to /api/callback
// or /api/registry that got no answer at all (no connection) is sent again every
// 300 ms for up to 60 s. The SDK's axios instance takes the adapter from axios.defaults
// when it is created, so this module is imported before the SDK.
import axios from 'axios'

const base = axios.getAdapter(axios.defaults.adapter)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const retried = /\/api\/(callback|registry)$/

axios.defaults.adapter = async (config) => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await base(config)
    } catch (e) {
      if (e?.response || !retried.test(config.url || '') || attempt >= 200) throw e
      if (attempt === 1) console.error(`retrying ${config.url}: ${e?.code || e?.message || e}`)
      await sleep(300)
    }
  }
}
