'use client';

import { PageHeader } from '@/components/ui';
import { ChannelsCard } from './channels-card';
import { DeadLettersCard, NotificationsCard } from './notifications-card';
import { RulesCard } from './rules-card';

/**
 * Notifications: where they go (channels), what is sent where (rules), what was sent, and
 * the dead letters an operator may send again. A viewer sees all of it without a control.
 */
export default function NotificationsPage() {
  return (
    <>
      <PageHeader
        title="Notifications"
        subtitle="A shard's leader sends each event a rule matches to its channel once, signed when the channel has a secret, and retries a failure with backoff. Channel URLs are shown masked."
      />
      <ChannelsCard />
      <RulesCard />
      <DeadLettersCard />
      <NotificationsCard />
    </>
  );
}
