export { freePort } from "./free-port.js";
export { startRedis, uniquePrefix, type RedisHandle, type StartRedisOptions } from "./redis.js";
export * from "./prometheus.js";
