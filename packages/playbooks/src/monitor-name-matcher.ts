export interface MonitorNameMatch {
  bookName: string;
  monitorName: string;
  /** Values captured by the monitor name's {{placeholders}}. */
  attributes: Record<string, string>;
}

export interface MonitorNameMatcher {
  /** The most specific playbook whose monitor name matches the title, or undefined. */
  match(title: string): MonitorNameMatch | undefined;
}
