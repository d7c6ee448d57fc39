/**
 * A Microsoft Teams channel as `channelId` names it: `<team-id>/<channel-id>`, the team's id (the GUID
 * of its Microsoft 365 group, `groupId` in a channel link) and the channel's thread id
 * (`19:…@thread.tacv2`). Anything else in `channelId` is a Slack channel ID.
 */
export interface TeamsChannelRef {
  teamId: string;
  channelId: string;
}

const TEAMS_CHANNEL = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(19:[A-Za-z0-9_.-]{1,200}@thread\.[a-z0-9]{1,20})$/i;

/** The team and channel `channelId` names, or undefined when it is no Teams channel (a Slack channel ID). */
export function parseTeamsChannelId(channelId: string): TeamsChannelRef | undefined {
  const match = TEAMS_CHANNEL.exec(channelId.trim());
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  return { teamId: match[1].toLowerCase(), channelId: match[2] };
}

/** Whether `channelId` is written as a Teams channel, well-formed or not (it has the `/` no Slack ID has). */
export function looksLikeTeamsChannelId(channelId: string): boolean {
  return channelId.includes("/") || channelId.includes("@thread.");
}
