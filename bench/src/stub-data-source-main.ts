/**
 * Entry point of the stub data source child process. A process of its own, not a server inside the
 * harness: the harness's event loop runs the load generator and must not also serve data-source
 * answers, and a real data source is another process too.
 * STUB_LISTEN = "<port>:<delayMs>,<port>:<delayMs>": one server per entry.
 */
import { createStubDataSource } from "./stub-data-source.js";

const listen = (process.env.STUB_LISTEN ?? "0:0").split(",").map((entry) => {
  const [port, delay] = entry.split(":").map(Number);
  return { port: port ?? 0, delayMs: delay ?? 0 };
});

const stubs = listen.map(({ delayMs }) => createStubDataSource({ delayMs }));
await Promise.all(stubs.map((stub, index) => stub.start(listen[index]?.port ?? 0)));
process.stdout.write("stub data source ready\n");

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void Promise.all(stubs.map((stub) => stub.stop())).then(() => process.exit(0));
  });
}
