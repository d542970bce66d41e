import { router } from '../../trpc/init.ts';
import { currentUser } from './currentUser.ts';
import { preferences } from './preferences.ts';
import { setDataAccessRole } from './setDataAccessRole.ts';
import { setRightsholderSort } from './setRightsholderSort.ts';
import { updateOrganizationUserStatus } from './updateOrganizationUserStatus.ts';

export const userRouter = router({
  currentUser,
  preferences,
  setDataAccessRole,
  setRightsholderSort,
  updateOrganizationUserStatus,
});
