import { describe, expect, it } from "vitest";
import { looksLikeTeamsChannelId, parseTeamsChannelId } from "./teams-channel.js";

describe("parseTeamsChannelId", () => {
  it("reads <team-id>/<channel-id>", () => {
    expect(parseTeamsChannelId("FBE2BF47-16C8-47CF-B4A5-4B9B187C508B/19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2")).toEqual({
      teamId: "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b",
      channelId: "19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2",
    });
  });

  it("is undefined for Slack channel IDs and malformed Teams ones", () => {
    for (const id of [
      "C0ALERTS",
      "fbe2bf47/19:x@thread.tacv2",
      "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b/general",
      "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b/19:a b@thread.tacv2",
    ]) {
      expect(parseTeamsChannelId(id)).toBeUndefined();
    }
    expect(looksLikeTeamsChannelId("C0ALERTS")).toBe(false);
    expect(looksLikeTeamsChannelId("fbe2bf47/19:x@thread.tacv2")).toBe(true);
  });
});
