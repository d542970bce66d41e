import { router } from '../../trpc/init.ts';
import { addUser } from './addUser.ts';
import { create } from './create.ts';
import { deleteOrganization } from './delete.ts';
import { getById } from './getById.ts';
import { getInvitationLink } from './getInvitationLink.ts';
import { list } from './list.ts';
import { listInvitations } from './listInvitations.ts';
import { listRightsholderMdPriorities } from './listRightsholderMdPriorities.ts';
import { listUsers } from './listUsers.ts';
import { removeUser } from './removeUser.ts';
import { resendInvitation } from './resendInvitation.ts';
import { revokeInvitation } from './revokeInvitation.ts';
import { setRightsholderMdPriorities } from './setRightsholderMdPriorities.ts';
import { update } from './update.ts';
import { updateMdFetchSettings } from './updateMdFetchSettings.ts';
import { updateRole } from './updateRole.ts';

export const organizationRouter = router({
  addUser,
  create,
  delete: deleteOrganization,
  getById,
  getInvitationLink,
  list,
  listInvitations,
  listRightsholderMdPriorities,
  listUsers,
  removeUser,
  resendInvitation,
  revokeInvitation,
  setRightsholderMdPriorities,
  update,
  updateMdFetchSettings,
  updateRole,
});
