/* Generated from tfprof_nb/_native/layout.py by `python -m tfprof_nb._native.layout`:
   edit that file, not this one. */
#ifndef TFPROF_LAYOUT_H
#define TFPROF_LAYOUT_H

enum { T_P, T_L, T_M, T_SM, T_CH, T_X, T_EV, T_EX, T_ST, T_TX, N_TABLES };
#define P_COLS 3
enum { P_ID = 0, P_NAME_OFF = 1, P_NAME_LEN = 2 };
#define L_COLS 9
enum { L_PLANE = 0, L_ID = 1, L_DISPLAY_ID = 2, L_NAME_OFF = 3, L_NAME_LEN = 4, L_DNAME_OFF = 5, L_DNAME_LEN = 6, L_TIMESTAMP_NS = 7, L_DURATION_PS = 8 };
#define M_COLS 9
enum { M_PLANE = 0, M_KEY = 1, M_ID = 2, M_NAME_OFF = 3, M_NAME_LEN = 4, M_DNAME_OFF = 5, M_DNAME_LEN = 6, M_META_OFF = 7, M_META_LEN = 8 };
#define SM_COLS 7
enum { SM_PLANE = 0, SM_KEY = 1, SM_ID = 2, SM_NAME_OFF = 3, SM_NAME_LEN = 4, SM_DESC_OFF = 5, SM_DESC_LEN = 6 };
#define CH_COLS 2
enum { CH_META_ROW = 0, CH_CHILD = 1 };
#define X_COLS 3
enum { X_FIELD = 0, X_OFF = 1, X_LEN = 2 };
#define EX_COLS 3
enum { EX_ROW = 0, EX_WHAT = 1, EX_VALUE = 2 };
enum { KIND_NONE, KIND_DOUBLE, KIND_UINT64, KIND_INT64, KIND_STR, KIND_BYTES, KIND_REF };
enum { OWNER_EVENT, OWNER_EVENT_METADATA, OWNER_PLANE };
#define N_TYPES 18

#endif
