import { statements } from "./statements.js"

/**
 * A regrade plan that starts committing wakes the worker's corrections job at once
 * (`NOTIFY birzha_due`, as 0030 does for timed moments): beyond its first chunk a commit continues
 * in the worker, which otherwise found it only at its next fallback tick. `nextCommittingPlanMoment`
 * reads the index 0027 made (`learning_regrade_plans_committing`).
 */
export const regradeCommitWakeup = statements(
  `CREATE FUNCTION learning_regrade_plans_due_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.status = 'committing' AND OLD.status IS DISTINCT FROM NEW.status THEN
        PERFORM birzha_notify_due('learning_corrections', now());
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER learning_regrade_plans_due AFTER UPDATE OF status ON learning_regrade_plans
    FOR EACH ROW EXECUTE FUNCTION learning_regrade_plans_due_notify()`
)
