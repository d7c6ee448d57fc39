export { cardLine, cardLink, cardText } from "./card-text.js";
export {
  channelKey,
  postTeamsBatchRoot,
  postTeamsEnrichment,
  postTeamsItemReply,
  type TeamsPostContext,
  type TeamsPostOutcome,
} from "./post-to-teams.js";
export { createTeamsPostClient, type TeamsPostClient, type TeamsPostClientOptions } from "./teams-calls.js";
export { markOf, renderTeamsBatchRoot, renderTeamsMessage, TEAMS_LIMITS, type TeamsCardExtras, type TeamsChatMessage, type TeamsView } from "./teams-card.js";
