package conformance;

import com.xxl.job.core.context.XxlJobHelper;
import com.xxl.job.core.executor.impl.XxlJobSimpleExecutor;
import com.xxl.job.core.handler.annotation.XxlJob;

import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A real xxl-job-core executor for the conformance suite, configured like the Node one
 * by environment: ADMIN (admin base URL with context path), APPNAME, PORT, TOKEN.
 * Handlers: demoJobHandler, failJobHandler, slowJobHandler (param = seconds),
 * shardingJobHandler, echoJobHandler (succeeds with its parameter as the handle message,
 * as it is: a workflow node's output). Prints "READY <port>" once started; SIGTERM unregisters it.
 */
public class Executor {

    public static void main(String[] args) throws Exception {
        String admin = env("ADMIN", "http://127.0.0.1:8080/xxl-job-admin");
        int port = Integer.parseInt(env("PORT", "9999"));

        XxlJobSimpleExecutor executor = new XxlJobSimpleExecutor();
        executor.setAdminAddresses(admin);
        executor.setAppname(env("APPNAME", "xxl-job-executor-sample"));
        executor.setAccessToken(env("TOKEN", "default_token"));
        executor.setPort(port);
        // Job logs under the working directory: executors started side by side must not
        // share log files (they are named by log id only).
        executor.setLogPath(env("LOG_PATH", "xxl-job-logs"));
        executor.setLogRetentionDays(3);
        executor.setXxlJobBeanList(List.of(new Handlers()));
        executor.start();
        Runtime.getRuntime().addShutdownHook(new Thread(executor::destroy));
        System.out.println("READY " + port);
        System.out.flush();
        new CountDownLatch(1).await();
    }

    private static String env(String name, String def) {
        String v = System.getenv(name);
        return v == null ? def : v;
    }

    /** The handlers every conformance executor offers. */
    public static class Handlers {

        @XxlJob("demoJobHandler")
        public void demo() {
            String param = XxlJobHelper.getJobParam();
            XxlJobHelper.log("demo params=" + param);
            XxlJobHelper.handleSuccess(("demo ok " + (param == null ? "" : param)).trim());
        }

        @XxlJob("failJobHandler")
        public void fail() {
            XxlJobHelper.log("failing on purpose");
            XxlJobHelper.handleFail("failJobHandler failed on purpose");
        }

        @XxlJob("slowJobHandler")
        public void slow() throws InterruptedException {
            String param = XxlJobHelper.getJobParam();
            int secs = param == null || param.isBlank() ? 5 : Integer.parseInt(param.trim());
            XxlJobHelper.log("sleeping " + secs + "s");
            Thread.sleep(secs * 1000L);
            XxlJobHelper.handleSuccess("slept " + secs + "s");
        }

        @XxlJob("echoJobHandler")
        public void echo() {
            String param = XxlJobHelper.getJobParam();
            XxlJobHelper.log("echo params=" + param);
            XxlJobHelper.handleSuccess(param == null ? "" : param);
        }

        @XxlJob("shardingJobHandler")
        public void sharding() {
            String msg = "shard " + XxlJobHelper.getShardIndex() + "/" + XxlJobHelper.getShardTotal();
            XxlJobHelper.log(msg);
            XxlJobHelper.handleSuccess(msg);
        }
    }
}
